package app

import (
	"fmt"
	"net/http"
	"strings"

	"cosmossdk.io/log/v2"
	servertypes "github.com/cosmos/cosmos-sdk/server/types"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cast"

	"github.com/inferenced/inferenced/appmetrics"
)

// registerMetrics registers the app's series (appmetrics, inference_*)
// with reg when app.toml's [telemetry] is enabled. The node passes the
// default registry, which CometBFT's Prometheus endpoint serves: one
// endpoint per node carries cometbft_* and inference_* (docs/metrics.md).
func registerMetrics(appOpts servertypes.AppOptions, logger log.Logger, reg prometheus.Registerer) error {
	if !cast.ToBool(appOpts.Get("telemetry.enabled")) {
		return nil
	}
	if err := appmetrics.Register(reg); err != nil {
		return fmt.Errorf("app metrics: %w", err)
	}
	if !cast.ToBool(appOpts.Get("instrumentation.prometheus")) {
		logger.Warn("app.toml [telemetry] is enabled but config.toml [instrumentation] prometheus is false: " +
			"no endpoint serves the app's inference_* series (they are served with CometBFT's, on prometheus_listen_addr)")
	}
	return nil
}

// PrometheusOnREST is the REST server's answer to /metrics?format=prometheus.
const PrometheusOnREST = "the app's Prometheus series (inference_*) are served with CometBFT's on config.toml's " +
	"[instrumentation] prometheus_listen_addr (/metrics): scrape that endpoint, once per node (docs/metrics.md)\n"

// restPrometheusFormat is the ?format= value for which the SDK's REST
// /metrics handler (server/api) answers in Prometheus' text format; the
// SDK's own constant is deprecated with its go-metrics telemetry, the
// handler is not.
const restPrometheusFormat = "prometheus"

// refusePrometheusOnREST makes the REST server's /metrics?format=prometheus
// answer 404, naming the endpoint that serves the series. The SDK's handler
// gathers the same default registry as CometBFT's endpoint, so a Prometheus
// scraping both got every series twice. Registered before the SDK's
// /metrics route (api.Server.SetTelemetry runs after RegisterAPIRoutes), it
// matches first; the SDK's other formats (its in-memory JSON) are left
// alone.
func refusePrometheusOnREST(r *mux.Router) {
	prom := func(req *http.Request, _ *mux.RouteMatch) bool {
		return strings.TrimSpace(req.FormValue("format")) == restPrometheusFormat
	}
	r.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, PrometheusOnREST, http.StatusNotFound)
	}).MatcherFunc(prom)
}
