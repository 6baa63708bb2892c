package ve

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

func ext(t testing.TB, epoch uint64, vs ...verdict.Verdict) types.HealthVoteExtension {
	t.Helper()
	packed, err := verdict.Pack(vs)
	if err != nil {
		t.Fatal(err)
	}
	return types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := ext(t, 7, verdict.OK, verdict.Miss, verdict.Unknown)
	bz, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(bz, 3)
	if err != nil {
		t.Fatal(err)
	}
	if out.EpochIndex != 7 || !bytes.Equal(out.Verdicts, in.Verdicts) {
		t.Fatalf("round trip: %+v", out)
	}
	if err := Validate(out, 7, 3); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyExtensionAbstains(t *testing.T) {
	out, err := Decode(nil, 100)
	if err != nil || out.EpochIndex != 0 || len(out.Verdicts) != 0 {
		t.Fatalf("empty: %+v, %v", out, err)
	}
}

// One named case per attack on the codec.
func TestDecodeRejectsAttacks(t *testing.T) {
	valid, err := Encode(ext(t, 2, verdict.OK, verdict.Miss))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		bz   []byte
		want error
	}{
		{"oversized before decoding", append(bytes.Repeat([]byte{0}, MaxSize(2)), 1), ErrOversized},
		{"garbage", []byte{0xff, 0xff, 0xff}, ErrMalformed},
		{"truncated", valid[:len(valid)-1], ErrMalformed},
		{"unknown field appended", append(append([]byte{}, valid...), 0x18, 0x01), ErrNonCanonical},
		{"fields reordered", []byte{0x12, 0x01, 0x09, 0x08, 0x02}, ErrNonCanonical},
		{"field repeated", append(append([]byte{}, valid...), 0x08, 0x02), ErrNonCanonical},
		{"non-minimal varint", []byte{0x08, 0x82, 0x00, 0x12, 0x01, 0x09}, ErrNonCanonical},
		{"explicit zero epoch", []byte{0x08, 0x00, 0x12, 0x01, 0x09}, ErrNonCanonical},
		{"explicit empty verdicts", []byte{0x08, 0x02, 0x12, 0x00}, ErrNonCanonical},
	}
	for _, c := range cases {
		if _, err := Decode(c.bz, 2); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestValidateRejectsWrongEpochAndLength(t *testing.T) {
	e := ext(t, 5, verdict.OK, verdict.OK, verdict.OK)
	if err := Validate(e, 4, 3); !errors.Is(err, ErrWrongEpoch) {
		t.Errorf("previous epoch: %v", err)
	}
	if err := Validate(e, 5, 5); !errors.Is(err, verdict.ErrLength) {
		t.Errorf("group of 5 given 3 verdicts' bytes: %v", err)
	}
	if err := Validate(e, 5, 3); err != nil {
		t.Errorf("valid: %v", err)
	}
}

func TestSizeAtBudgets(t *testing.T) {
	for _, c := range []struct{ n, budget int }{{1000, 260}, {10000, 2600}} {
		vs := make([]verdict.Verdict, c.n)
		for i := range vs {
			vs[i] = verdict.Miss
		}
		bz, err := Encode(ext(t, 1<<40, vs...))
		if err != nil {
			t.Fatal(err)
		}
		if len(bz) > c.budget || len(bz) > MaxSize(c.n) {
			t.Errorf("%d executors: %d bytes (budget %d, max %d)", c.n, len(bz), c.budget, MaxSize(c.n))
		}
		t.Logf("%d executors: %d bytes", c.n, len(bz))
	}
}

// FuzzDecode: never panics; whatever it accepts re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x08, 0x02, 0x12, 0x01, 0x09}, 2)
	f.Add([]byte{}, 0)
	f.Add([]byte{0x12, 0x01, 0x09, 0x08, 0x02}, 2)
	f.Fuzz(func(t *testing.T, bz []byte, n int) {
		if n < 0 || n > 1<<14 {
			return
		}
		e, err := Decode(bz, n)
		if err != nil {
			return
		}
		again, err := Encode(e)
		if err != nil || !bytes.Equal(again, bz) {
			t.Fatalf("accepted %x but re-encodes to %x", bz, again)
		}
		_ = Validate(e, e.EpochIndex, n)
	})
}

// BenchmarkExtensionSize reports the encoded size of an extension at 1,000
// and 10,000 executors (goals 260 B and 2.6 KB), at a realistic epoch index
// and at a very large one.
func BenchmarkExtensionSize(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, epoch := range []uint64{1000, 1 << 40} {
			b.Run(fmt.Sprintf("executors=%d/epoch=%d", n, epoch), func(b *testing.B) {
				vs := make([]verdict.Verdict, n)
				for i := range vs {
					vs[i] = verdict.Verdict(1 + i%2)
				}
				var size int
				for b.Loop() {
					packed, err := verdict.Pack(vs)
					if err != nil {
						b.Fatal(err)
					}
					bz, err := Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed})
					if err != nil {
						b.Fatal(err)
					}
					size = len(bz)
				}
				b.ReportMetric(float64(size), "bytes")
			})
		}
	}
}
