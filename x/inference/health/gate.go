package health

import "github.com/inferenced/inferenced/x/inference/breaker"

// gate is an EXCLUDED or PROBE executor's routing state in one integer: the
// eligible height shifted left by two, or'ed with a code in the low two
// bits. HEALTHY executors have no gate. Only this type knows the layout.
type gate uint64

const (
	gateExcluded   gate = 1
	gateProbeFree  gate = 2
	gateProbeTaken gate = 3
	gateCodeBits        = 2
	gateCodeMask   gate = 1<<gateCodeBits - 1
)

// gateOf returns the gate of a record and whether it has one.
func gateOf(r breaker.Record) (gate, bool) {
	switch {
	case r.State == breaker.Excluded:
		return gate(r.EligibleAt())<<gateCodeBits | gateExcluded, true
	case r.State == breaker.Probe && r.ProbeInFlight:
		return gateProbeTaken, true
	case r.State == breaker.Probe:
		return gateProbeFree, true
	}
	return 0, false
}

func (g gate) code() gate { return g & gateCodeMask }

// excluded reports whether the gate is an EXCLUDED executor's (the others
// are PROBE).
func (g gate) excluded() bool { return g.code() == gateExcluded }

// offersProbe reports whether selection at height offers the executor
// behind the gate as a probe: a PROBE with its slot free, or an EXCLUDED one
// whose cooldown has passed by height (the block's first step promotes it
// before any start runs). Otherwise the executor is out.
func (g gate) offersProbe(height int64) bool {
	switch g.code() {
	case gateProbeFree:
		return true
	case gateExcluded:
		return height >= int64(g>>gateCodeBits)
	}
	return false
}
