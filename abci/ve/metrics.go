package ve

import (
	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/x/inference/types"
)

// MetricKey names a metric of health attestation (this package, the
// proposal handlers and the pre-blocker): every one is
// inference_attestation_<name...> in Prometheus.
func MetricKey(name ...string) []string {
	return append([]string{types.ModuleName, "attestation"}, name...)
}

// This package's series (appmetrics: each exists at zero from the start).
var (
	seriesAbstained     = appmetrics.NewCounter(MetricKey("abstained"), "vote extensions this validator sent empty (abstained)")
	seriesExtensionSize = appmetrics.NewGauge(MetricKey("extension_size_bytes"), "size of this validator's last vote extension")
)
