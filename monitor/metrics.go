package monitor

import "github.com/inferenced/inferenced/x/inference/types"

// MetricKey names a metric of the health monitor: every one is
// inference_monitor_<name...> in Prometheus.
func MetricKey(name ...string) []string {
	return append([]string{types.ModuleName, "monitor"}, name...)
}
