package verdict

import "fmt"

// A verdict relative to a reference verdict r is rotated among the three
// values so that r reads OK: the verdicts of a validator that agrees with
// the reference everywhere are all OK, and its compact list is empty
// (x/inference/verdictref says which reference a vote extension is
// relative to). Rotation is a bijection for each r, so every absolute
// verdict has exactly one relative one and back.

// RelativeOf is verdict v relative to reference verdict r (both valid).
func RelativeOf(v, r Verdict) Verdict { return (v + 2*OK + Miss - r) % 3 }

// AbsoluteOf is the verdict that v, relative to reference verdict r,
// stands for (both valid): the inverse of RelativeOf.
func AbsoluteOf(v, r Verdict) Verdict { return (v + r + Miss) % 3 }

// Relative is the packing of n verdicts relative to the packing ref (nil:
// all OK, so the verdicts are unchanged). Both must be valid packings of
// n (Check).
func Relative(packed, ref []byte, n int) ([]byte, error) {
	return rotate(packed, ref, n, RelativeOf)
}

// Absolute is the inverse of Relative: the packing of the n verdicts that
// the packing rel, relative to ref, stands for.
func Absolute(rel, ref []byte, n int) ([]byte, error) {
	return rotate(rel, ref, n, AbsoluteOf)
}

func rotate(packed, ref []byte, n int, by func(v, r Verdict) Verdict) ([]byte, error) {
	if err := Check(packed, n); err != nil {
		return nil, err
	}
	out := append([]byte(nil), packed...)
	if ref == nil {
		return out, nil
	}
	if err := Check(ref, n); err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	for i := range n {
		v := by(At(packed, i), At(ref, i))
		out[i/4] = out[i/4]&^(3<<(2*(i%4))) | byte(v)<<(2*(i%4))
	}
	return out, nil
}
