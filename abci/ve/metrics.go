package ve

import "github.com/inferenced/inferenced/x/inference/types"

// MetricKey names a metric of health attestation (this package, the
// proposal handlers and the pre-blocker): every one is
// inference_attestation_<name...> in Prometheus.
func MetricKey(name ...string) []string {
	return append([]string{types.ModuleName, "attestation"}, name...)
}
