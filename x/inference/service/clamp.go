package service

import "slices"

// Relative is what an honest monitor reports: for each executor with a
// rate, how many points it stands above this validator's own median
// executor (the lower median of its known rates), or 0 when that is under
// floor points. A validator whose own network fails some canaries sees
// every executor worse, and a rise every executor shows is nobody's fault:
// both cancel out here, and the lists stay short (the executors that stand
// out), whatever the noise of a few canaries. Unknown, and any value that
// is not a rate, is Unknown.
func Relative(rates []Report, floor Report) []Report {
	var counts [MaxRate + 1]int
	known := 0
	for _, r := range rates {
		if r.Known() {
			counts[r]++
			known++
		}
	}
	var median Report
	if known > 0 {
		median = lowerMedian(&counts, known)
	}
	out := make([]Report, len(rates))
	for i, r := range rates {
		switch {
		case !r.Known():
			out[i] = Unknown
		case r < median+floor || r <= median:
			out[i] = 0
		default:
			out[i] = r - median
		}
	}
	return out
}

// Clamp makes a list of reports encodable within MaxExceptions: when more
// than that many are not 0%, the lowest rates (the later executor first
// among equal ones) are reported as 0%, so the executors that stand out
// most are kept; when Unknowns alone exceed it, every report becomes
// Unknown (the validator abstains on service: an unknown cannot be turned
// into a rate). The result never aliases reports.
func Clamp(reports []Report) []Report {
	out := slices.Clone(reports)
	type rated struct {
		i int
		r Report
	}
	var rates []rated
	unknowns := 0
	for i, r := range out {
		switch {
		case r == Unknown:
			unknowns++
		case r != 0:
			rates = append(rates, rated{i, r})
		}
	}
	if unknowns+len(rates) <= MaxExceptions {
		return out
	}
	if unknowns > MaxExceptions {
		for i := range out {
			out[i] = Unknown
		}
		return out
	}
	slices.SortStableFunc(rates, func(a, b rated) int { return int(b.r) - int(a.r) })
	for _, x := range rates[MaxExceptions-unknowns:] {
		out[x.i] = 0
	}
	return out
}

// Attest is what an honest validator puts in its extension for the
// failed shares its monitor saw: Relative to its own median under floor,
// Clamped to what a list holds, encoded.
func Attest(rates []Report, floor Report) ([]byte, error) {
	return Encode(Clamp(Relative(rates, floor)))
}
