package breaker

// Gate is an EXCLUDED or PROBE executor's routing state in one integer: the
// eligible height shifted left by two, or'ed with a code in the low two
// bits. HEALTHY executors have no gate. Only this type knows the layout;
// the breaker's store keeps one per such executor, so that selection reads
// a few small integers instead of whole records.
type Gate uint64

const (
	// gateExcludedOnService: EXCLUDED on service evidence, whose probe the
	// canaries decide: never offered as a probe.
	gateExcludedOnService Gate = 0
	gateExcluded          Gate = 1
	gateProbeFree         Gate = 2
	gateProbeTaken        Gate = 3
	gateCodeBits               = 2
	gateCodeMask          Gate = 1<<gateCodeBits - 1
)

// GateOf returns the gate of a record and whether it has one.
func GateOf(r Record) (Gate, bool) {
	switch {
	case r.State == Excluded && !r.OffersProbe():
		return Gate(r.EligibleAt())<<gateCodeBits | gateExcludedOnService, true
	case r.State == Excluded:
		return Gate(r.EligibleAt())<<gateCodeBits | gateExcluded, true
	case r.State == Probe && (r.ProbeInFlight || !r.OffersProbe()):
		return gateProbeTaken, true
	case r.State == Probe:
		return gateProbeFree, true
	}
	return 0, false
}

func (g Gate) code() Gate { return g & gateCodeMask }

// Excluded reports whether the gate is an EXCLUDED executor's (the others
// are PROBE).
func (g Gate) Excluded() bool {
	return g.code() == gateExcluded || g.code() == gateExcludedOnService
}

// OffersProbe reports whether selection at height offers the executor
// behind the gate as a probe: a PROBE with its slot free, or an EXCLUDED one
// whose cooldown has passed by height (the block's first step promotes it
// before any start runs). Otherwise the executor is out.
func (g Gate) OffersProbe(height int64) bool {
	switch g.code() {
	case gateProbeFree:
		return true
	case gateExcluded:
		return height >= int64(g>>gateCodeBits)
	}
	return false
}

// RefusesStart reports whether a start in the block at height on the
// executor whose record is r is refused: EXCLUDED before the previous
// block (a draw answered from the previous block could not have seen a
// newer exclusion), or a PROBE whose slot is taken or that offers none. The keeper lets such a
// start through only while the model is in the all-excluded fallback.
func RefusesStart(r Record, height int64) bool {
	switch r.State {
	case Excluded:
		return r.ExcludedAt < height-1
	case Probe:
		return r.ProbeInFlight || !r.OffersProbe()
	}
	return false
}

// ProbeWeight is the weight a PROBE executor is offered at: the average
// weight of the healthy candidates (at least 1). The probe slot already
// bounds what a still-dead executor costs to one request, so the weight
// only decides how soon a recovered one is tried; at weight 1 among a
// large total weight it could wait for thousands of requests. Selection
// never offers a probe more than its own epoch weight.
func ProbeWeight(healthyWeight, healthy uint64) uint64 {
	if healthy == 0 {
		return 1
	}
	return max(1, healthyWeight/healthy)
}
