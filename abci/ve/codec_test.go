package ve

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/inferenced/inferenced/x/inference/service"
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

// encodeVerdicts is the extension for epoch carrying vs, for a group of len(vs).
func encodeVerdicts(t testing.TB, epoch uint64, vs ...verdict.Verdict) ([]byte, error) {
	t.Helper()
	return Encode(ext(t, epoch, vs...), len(vs))
}

func oks(n int) []verdict.Verdict {
	vs := make([]verdict.Verdict, n)
	for i := range vs {
		vs[i] = verdict.OK
	}
	return vs
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := ext(t, 7, verdict.OK, verdict.Miss, verdict.Unknown)
	bz, err := Encode(in, 3)
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
	if err := validate(out, 7, 3); err != nil {
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
	valid, err := encodeVerdicts(t, 2, verdict.OK, verdict.Miss)
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
		{"unknown field appended", append(append([]byte{}, valid...), 0x20, 0x01), ErrNonCanonical},
		{"service field with the wrong wire type", append(append([]byte{}, valid...), 0x18, 0x01), ErrMalformed},
		{"empty service field written out: a second encoding of none", append(append([]byte{}, valid...), 0x1a, 0x00), ErrNonCanonical},
		{"service before verdicts", []byte{0x08, 0x02, 0x1a, 0x01, 0x00, 0x12, 0x01, 0x09}, ErrNonCanonical},
		{"fields reordered", []byte{0x12, 0x01, 0x09, 0x08, 0x02}, ErrNonCanonical},
		{"field repeated", append(append([]byte{}, valid...), 0x08, 0x02), ErrNonCanonical},
		{"non-minimal varint", []byte{0x08, 0x82, 0x00, 0x12, 0x01, 0x09}, ErrNonCanonical},
		{"explicit zero epoch", []byte{0x08, 0x00, 0x12, 0x01, 0x09}, ErrNonCanonical},
		{"explicit empty verdicts", []byte{0x08, 0x02, 0x12, 0x00}, ErrNonCanonical},
		{"verdicts without an epoch", []byte{0x12, 0x01, 0x09}, ErrNoEpoch},
		{"verdicts longer than their packing", []byte{0x08, 0x02, 0x12, 0x02, 0x09, 0x00}, verdict.ErrOversized},
	}
	// The same attacks on the verdicts, in a group of 8 (a 2-byte packing).
	wide := []struct {
		name string
		bz   []byte
		want error
	}{
		{"non-canonical choice: packed though sparse is shorter", []byte{0x08, 0x02, 0x12, 0x02, 0x55, 0x55}, verdict.ErrNonCanonical},
		{"sparse index out of range", []byte{0x08, 0x02, 0x12, 0x01, 0x10}, verdict.ErrSparse},
		{"sparse truncated varint", []byte{0x08, 0x02, 0x12, 0x01, 0x81}, verdict.ErrSparse},
	}
	for _, c := range wide {
		if _, err := Decode(c.bz, 8); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	for _, c := range cases {
		if _, err := Decode(c.bz, 2); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// An all-ok extension is its epoch alone; a few misses add a byte or two
// each; a validator that sees everything unknown sends the packing.
func TestCompactExtensionSizes(t *testing.T) {
	allOK, err := encodeVerdicts(t, 1000, oks(1000)...)
	if err != nil || !bytes.Equal(allOK, []byte{0x08, 0xe8, 0x07}) {
		t.Fatalf("all ok: %x %v", allOK, err)
	}
	few := oks(10000)
	few[17], few[9000] = verdict.Miss, verdict.Unknown
	bz, err := encodeVerdicts(t, 1000, few...)
	if err != nil || len(bz) != 3+2+1+3 {
		t.Fatalf("two exceptions in 10,000: %d bytes %x %v", len(bz), bz, err)
	}
	got, err := Decode(bz, 10000)
	if err != nil || verdict.At(got.Verdicts, 17) != verdict.Miss || verdict.At(got.Verdicts, 9000) != verdict.Unknown || verdict.At(got.Verdicts, 18) != verdict.OK {
		t.Fatalf("decode: %v", err)
	}
	unknown, err := encodeVerdicts(t, 1000, make([]verdict.Verdict, 1000)...)
	if err != nil || len(unknown) != 3+3+250 {
		t.Fatalf("all unknown: %d bytes %v", len(unknown), err)
	}
	if _, err := Encode(ext(t, 0, verdict.OK), 1); !errors.Is(err, ErrNoEpoch) {
		t.Fatalf("epoch 0: %v", err)
	}
}

func TestValidateRejectsWrongEpochAndLength(t *testing.T) {
	e := ext(t, 5, verdict.OK, verdict.OK, verdict.OK)
	if err := validate(e, 4, 3); !errors.Is(err, ErrWrongEpoch) {
		t.Errorf("previous epoch: %v", err)
	}
	if err := validate(e, 5, 5); !errors.Is(err, verdict.ErrLength) {
		t.Errorf("group of 5 given 3 verdicts' bytes: %v", err)
	}
	if err := validate(e, 5, 3); err != nil {
		t.Errorf("valid: %v", err)
	}
}

func TestSizeAtBudgets(t *testing.T) {
	for _, c := range []struct{ n, budget int }{{1000, 260}, {10000, 2600}} {
		vs := make([]verdict.Verdict, c.n)
		for i := range vs {
			vs[i] = verdict.Miss
		}
		bz, err := encodeVerdicts(t, 1<<40, vs...)
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
	f.Add([]byte{0x08, 0x02}, 100)
	f.Add([]byte{0x08, 0x02, 0x12, 0x02, 0x01, 0x04}, 100)
	f.Add([]byte{0x08, 0x02, 0x1a, 0x03, 0x00, 0x02, 0x1c}, 2) // service: executor 1 at 28%
	f.Fuzz(func(t *testing.T, bz []byte, n int) {
		if n < 0 || n > 1<<14 {
			return
		}
		e, err := Decode(bz, n)
		ref, refErr := referenceDecode(bz, n)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%x: strict decoder says %v, decode-and-re-encode says %v", bz, err, refErr)
		}
		if err != nil {
			if !errors.Is(err, refErr) {
				t.Fatalf("%x: rejected as %v, reference %v", bz, err, refErr)
			}
			return
		}
		if e.EpochIndex != ref.EpochIndex || !bytes.Equal(e.Verdicts, ref.Verdicts) || !bytes.Equal(e.Service, ref.Service) {
			t.Fatalf("%x: decoded %+v, reference %+v", bz, e, ref)
		}
		if len(bz) == 0 {
			return
		}
		again, err := Encode(e, n)
		if err != nil || !bytes.Equal(again, bz) {
			t.Fatalf("accepted %x but re-encodes to %x", bz, again)
		}
		_ = validate(e, e.EpochIndex, n)
	})
}

// referenceDecode is the obviously-canonical decoder the strict one must
// agree with: decode with gogoproto, require that re-encoding gives the
// same bytes, then expand the verdicts with the verdict package's strict
// decoder. It returns the sentinel error of its verdict.
func referenceDecode(bz []byte, n int) (types.HealthVoteExtension, error) {
	var ext types.HealthVoteExtension
	if len(bz) > MaxSize(n) {
		return ext, ErrOversized
	}
	if err := ext.Unmarshal(bz); err != nil {
		return types.HealthVoteExtension{}, ErrMalformed
	}
	if again, err := ext.Marshal(); err != nil || !bytes.Equal(again, bz) {
		return types.HealthVoteExtension{}, ErrNonCanonical
	}
	if len(bz) == 0 {
		return ext, nil
	}
	if ext.EpochIndex == 0 {
		return types.HealthVoteExtension{}, ErrNoEpoch
	}
	packed, err := verdict.Expand(ext.Verdicts, n)
	if err != nil {
		return types.HealthVoteExtension{}, ErrMalformed
	}
	if _, err := service.Decode(ext.Service, n); err != nil {
		return types.HealthVoteExtension{}, ErrMalformed
	}
	return types.HealthVoteExtension{EpochIndex: ext.EpochIndex, Verdicts: packed, Service: ext.Service}, nil
}

// The differential check above, over the attack shapes and edge varints,
// without waiting for the fuzzer to find them.
func TestStrictDecoderAgreesWithTheReference(t *testing.T) {
	inputs := [][]byte{
		nil, {0x08}, {0x08, 0x80}, {0x08, 0x01}, {0x08, 0x7f}, {0x08, 0x80, 0x01}, {0x08, 0x80, 0x00},
		{0x12}, {0x12, 0x00}, {0x12, 0x01}, {0x12, 0x01, 0x05}, {0x12, 0x02, 0x05}, {0x12, 0x81, 0x00, 0x05},
		{0x08, 0x02, 0x12, 0x01, 0x05}, {0x12, 0x01, 0x05, 0x08, 0x02}, {0x08, 0x02, 0x08, 0x02},
		{0x08, 0x02, 0x12, 0x01, 0x05, 0x00}, {0x0a, 0x00}, {0x10, 0x01}, {0x1a, 0x00},
		append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 9)...),
		append(append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 9)...), 0x01),
		append(append([]byte{0x08}, bytes.Repeat([]byte{0xff}, 9)...), 0x02),
		append(append([]byte{0x08}, bytes.Repeat([]byte{0x80}, 9)...), 0x01),
		append([]byte{0x12, 0xff, 0xff, 0xff, 0xff, 0x0f}, 0x05),
	}
	for _, bz := range inputs {
		for _, n := range []int{1, 4, 100} {
			e, err := Decode(bz, n)
			ref, refErr := referenceDecode(bz, n)
			if (err == nil) != (refErr == nil) || (err != nil && !errors.Is(err, refErr)) {
				t.Errorf("%x (n=%d): strict %v, reference %v", bz, n, err, refErr)
				continue
			}
			if err == nil && (e.EpochIndex != ref.EpochIndex || !bytes.Equal(e.Verdicts, ref.Verdicts)) {
				t.Errorf("%x (n=%d): strict %+v, reference %+v", bz, n, e, ref)
			}
		}
	}
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
					bz, err := Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}, n)
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

// validate checks a decoded (packed), non-empty extension against the
// epoch whose group has n members.
func validate(ext types.HealthVoteExtension, epoch uint64, n int) error {
	if err := checkEpoch(ext, epoch); err != nil {
		return err
	}
	return verdict.Check(ext.Verdicts, n)
}
