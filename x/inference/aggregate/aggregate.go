// Package aggregate turns the verified vote extensions of a commit into at
// most one attested sample per executor: a miss if validators holding more
// than half of C report miss, an ok if more than half report ok, otherwise
// nothing, where C is the voting power of all valid extensions (an empty
// one abstains but still counts in C, so abstaining never lets a minority
// decide). Integers only; executors in group order.
package aggregate

import (
	"errors"
	"fmt"
	"math"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Vote is one validator's valid extension: its power as recorded in the
// verified commit, and its packed verdicts (empty: abstains).
type Vote struct {
	Power    int64
	Verdicts []byte
}

// Sample is the attested verdict on the executor at Index in the group.
type Sample struct {
	Index int
	Miss  bool
}

// Aggregate computes the samples for a group of n executors. Every
// non-empty vote must hold exactly n verdicts; any other input is an error,
// never a panic.
func Aggregate(votes []Vote, n int) ([]Sample, error) {
	if n < 0 {
		return nil, errors.New("negative group size")
	}
	var total uint64
	for i, v := range votes {
		if v.Power < 0 {
			return nil, fmt.Errorf("vote %d: negative power %d", i, v.Power)
		}
		if total > math.MaxUint64/2-uint64(v.Power) {
			return nil, errors.New("total power overflows")
		}
		total += uint64(v.Power)
		if len(v.Verdicts) != 0 {
			if err := verdict.Check(v.Verdicts, n); err != nil {
				return nil, fmt.Errorf("vote %d: %w", i, err)
			}
		}
	}
	var out []Sample
	for i := 0; i < n; i++ {
		var ok, miss uint64
		for _, v := range votes {
			if len(v.Verdicts) == 0 {
				continue
			}
			switch verdict.At(v.Verdicts, i) {
			case verdict.OK:
				ok += uint64(v.Power)
			case verdict.Miss:
				miss += uint64(v.Power)
			}
		}
		switch {
		case 2*miss > total:
			out = append(out, Sample{Index: i, Miss: true})
		case 2*ok > total:
			out = append(out, Sample{Index: i})
		}
	}
	return out, nil
}
