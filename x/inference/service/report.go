// Package service is the validators' attestation of service: what share of
// the canary inferences each validator sent an executor failed, one report
// per executor in epoch-group order, and the power-weighted median that
// turns the reports of a commit into one attested rate per executor. A
// report is a small integer, so the encoding is canonical (one byte string
// per list) and the median is integer arithmetic in group order.
package service

import "fmt"

// Report is one validator's view of one executor's service: the percentage
// (0..MaxRate) of its recent canaries that failed, or Unknown.
type Report uint8

const (
	// MaxRate is the largest rate: every canary failed.
	MaxRate Report = 100
	// Unknown: no fresh canary outcomes (abstains on this executor).
	Unknown Report = 0xff
)

// Known reports whether r is a rate, not Unknown.
func (r Report) Known() bool { return r <= MaxRate }

func (r Report) String() string {
	switch {
	case r == Unknown:
		return "unknown"
	case r.Known():
		return fmt.Sprintf("%d%%", uint8(r))
	}
	return fmt.Sprintf("Report(%d)", uint8(r))
}

// Rate is the report of misses failed canaries out of total, rounded down;
// Unknown when total is zero or the counts are inconsistent.
func Rate(misses, total int) Report {
	if total <= 0 || misses < 0 || misses > total {
		return Unknown
	}
	return Report(misses * int(MaxRate) / total)
}
