package types

// Candidate is an epoch member offered to the selection lottery at some
// weight. The keeper's filter chain builds the pool; the breaker's health
// stage (x/inference/breakerstore) may drop a candidate or lower its weight.
type Candidate struct {
	Member EpochMember
	Weight uint64
	// Probe marks a PROBE executor offered its probe slot.
	Probe bool
}
