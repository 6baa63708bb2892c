package breakerstore

import (
	"bytes"
	"testing"
)

// FuzzStreaksCodec: the streaks item's and the held bits' decoders are
// strict. Whatever bytes they accept re-encode to exactly those bytes
// (one encoding per value: no trailing zero byte in a bitmap, no height
// without its bitmap, nothing after the item), and what they accept
// satisfies the item's shape (a quiet member is held; something
// carried).
func FuzzStreaksCodec(f *testing.F) {
	k, err := streaksCodec{}.Encode(streaks{epoch: 3, missAt: 90, miss: bitmap(nil).with(1).with(17), okAt: 88, ok: bitmap(nil).with(4)})
	if err != nil {
		f.Fatal(err)
	}
	b, err := heldBitsCodec{}.Encode(heldBits{held: bitmap(nil).with(1).with(9), quiet: bitmap(nil).with(9)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(k)
	f.Add(b)
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		if k, err := (streaksCodec{}).Decode(in); err == nil {
			out, err := streaksCodec{}.Encode(k)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("streaks %x decode to %s, which encode to %x (%v)", in, streaksCodec{}.Stringify(k), out, err)
			}
			if k.empty() || (k.miss == nil) != (k.missAt == 0) || (k.ok == nil) != (k.okAt == 0) {
				t.Fatalf("streaks %x accepted out of shape", in)
			}
		}
		if b, err := (heldBitsCodec{}).Decode(in); err == nil {
			out, err := heldBitsCodec{}.Encode(b)
			if err != nil || !bytes.Equal(out, in) {
				t.Fatalf("held bits %x decode to %s, which encode to %x (%v)", in, heldBitsCodec{}.Stringify(b), out, err)
			}
			if b.held == nil || !b.quiet.subsetOf(b.held) {
				t.Fatalf("held bits %x accepted out of shape", in)
			}
		}
	})
}

// TestStreaksCodecRejects: malformed items are refused.
func TestStreaksCodecRejects(t *testing.T) {
	good, err := streaksCodec{}.Encode(streaks{epoch: 1, missAt: 5, miss: bitmap{0x01}})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"empty":             nil,
		"another version":   append([]byte{2}, good[1:]...),
		"trailing byte":     append(append([]byte(nil), good...), 0),
		"cut short":         good[:len(good)-1],
		"trailing zero":     {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0},
		"height without":    {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1, 1, 0, 0, 0, 0},
		"nothing carried":   {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"negative height":   {1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0},
		"a length too long": {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1},
	} {
		if _, err := (streaksCodec{}).Decode(in); err == nil {
			t.Errorf("%s: streaks %x accepted", name, in)
		}
	}
	for name, in := range map[string][]byte{
		"nothing held":      {1, 0, 0, 0, 0, 0, 0, 0, 0},
		"quiet, not held":   {1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 2},
		"trailing zero":     {1, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0},
		"trailing byte":     {1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 9},
		"another version":   {0, 0, 0, 0, 1, 1, 0, 0, 0, 0},
		"a length too long": {1, 0xff, 0xff, 0xff, 0xff, 1},
	} {
		if _, err := (heldBitsCodec{}).Decode(in); err == nil {
			t.Errorf("%s: held bits %x accepted", name, in)
		}
	}
	if _, err := (heldBitsCodec{}).Decode([]byte{1, 0, 0, 0, 1, 3, 0, 0, 0, 1, 2}); err != nil {
		t.Errorf("a quiet member that is held: %v", err)
	}
}
