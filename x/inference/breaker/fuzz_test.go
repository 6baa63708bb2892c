package breaker

import "testing"

// FuzzSequence reads the input as a sequence of operations on one record
// (promote, claim the probe, or a sample of either kind, miss or ok, probe
// or not, with a cap that may refuse) and checks the invariants after each.
func FuzzSequence(f *testing.F) {
	f.Add([]byte{0x03, 0x03, 0x03, 0x80, 0x81, 0x07})
	f.Add([]byte{0x13, 0x13, 0x13, 0x40, 0x12})
	f.Add([]byte{0x02, 0x02, 0x02, 0xc0, 0xc0, 0xc0, 0x80, 0x22, 0x24, 0x06}) // stale outcomes after a promotion
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, ops []byte) {
		p := defaults()
		p.InitialCooldown, p.MaxCooldown = 2, 9
		var r Record
		height := int64(1)
		for step, op := range ops {
			height += int64(op >> 6)
			before := r
			var tr Transition
			switch op & 0x07 {
			case 0:
				r, tr = Promote(r, height)
			case 1:
				r, _ = ClaimProbe(r)
			default:
				s := Sample{Kind: Kind(op >> 4 & 1), Miss: op&0x02 != 0, Probe: op&0x04 != 0 && r.ProbeInFlight,
					StartedAt: height - int64(op>>5&1)*3}
				capOK := op&0x08 == 0
				r, tr = Observe(r, s, p, height, func() bool { return capOK })
			}
			if op&0x07 >= 2 && op>>4&1 == 0 && height-int64(op>>5&1)*3 < before.Since && r != before {
				t.Fatalf("step %d: a stale outcome changed the record", step)
			}
			checkInvariants(t, 0, step, p, before, r, tr, height)
		}
	})
}
