package verdict

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sparseAgrees compares sparseScan and AddSparse with Exceptions on one
// input, reporting any difference: the same acceptance, the same error,
// and each exception's power added where Exceptions visits it.
func sparseAgrees(t testing.TB, bz []byte, n int) {
	t.Helper()
	wantErr := Exceptions(bz, n, nil)
	if ok := sparseScan(bz, n, nil, nil, 0); ok != (wantErr == nil) {
		t.Fatalf("sparseScan(%x, %d) = %v, Exceptions %v", bz, n, ok, wantErr)
	}
	if n < 0 || n > 1<<16 {
		return
	}
	miss, unknown := make([]uint64, n), make([]uint64, n)
	wantMiss, wantUnknown := make([]uint64, n), make([]uint64, n)
	err := AddSparse(bz, n, 5, miss, unknown)
	_ = Exceptions(bz, n, func(i int, v Verdict) {
		if v == Miss {
			wantMiss[i] += 5
		} else {
			wantUnknown[i] += 5
		}
	})
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("AddSparse(%x, %d) = %v, Exceptions %v", bz, n, err, wantErr)
	}
	if err == nil && (!slices.Equal(miss, wantMiss) || !slices.Equal(unknown, wantUnknown)) {
		t.Fatalf("AddSparse(%x, %d) tallied other exceptions than Exceptions visits", bz, n)
	}
}

// TestSparseScanAgreesWithExceptions: on the lists honest validators send
// (1% missed at 1,000 and 10,000 executors: two-byte gaps), random lists
// of every density, and what a Byzantine validator can put in its
// extension instead (a cut, a byte changed or added, a non-minimal or
// over-long varint, a gap past the group, a varint overflow, a list as
// long as the packing), sparseScan accepts exactly what Exceptions
// accepts, AddSparse fails with its error and tallies what it visits, and
// CheckCompact refuses as it did.
func TestSparseScanAgreesWithExceptions(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	for _, n := range []int{1000, 10000} {
		at := map[int]Verdict{}
		for e := 0; e < n; e += 100 {
			at[e] = Miss
		}
		at[n/2+1] = Unknown
		packed, _ := Pack(list(n, at))
		bz, err := Compact(packed, n)
		if err != nil || !IsSparse(bz, n) {
			t.Fatalf("n=%d: %v", n, err)
		}
		sparseAgrees(t, bz, n)
	}
	attacks := [][]byte{
		{0x80, 0x00}, {0x81, 0x80, 0x01}, {0xff, 0x7f}, {0x80}, {0x05, 0x80},
		binary.AppendUvarint(nil, 1<<62), binary.AppendUvarint(nil, 1<<63|1),
		bytes.Repeat([]byte{0xff}, 11), {0x03, 0x03, 0x03},
	}
	for _, bz := range attacks {
		for _, n := range []int{0, 1, 2, 12, 64, 300, 9000, 40000} {
			sparseAgrees(t, bz, n)
		}
	}
	for run := range 4000 {
		n := rng.IntN(300)
		if run%50 == 0 {
			n = 8000 + rng.IntN(20000)
		}
		vs := make([]Verdict, n)
		density := rng.IntN(30)
		for i := range vs {
			vs[i] = OK
			if rng.IntN(1000) < density {
				vs[i] = Verdict(2 * rng.IntN(2))
			}
		}
		bz := naiveCompact(vs)
		if k := rng.IntN(3 * (len(bz) + 1)); k < len(bz) { // a byte changed
			bz[k] ^= byte(1 + rng.IntN(255))
		}
		if rng.IntN(3) == 0 { // cut
			bz = bz[:rng.IntN(len(bz)+1)]
		}
		if rng.IntN(6) == 0 { // a byte added
			bz = append(bz, byte(rng.IntN(256)))
		}
		sparseAgrees(t, bz, n)
		if CheckCompact(bz, n) == nil && IsSparse(bz, n) != (Exceptions(bz, n, nil) == nil) {
			t.Fatalf("CheckCompact accepted %x (n=%d)", bz, n)
		}
	}
}

// FuzzSparseScanAgrees: on any bytes and group size, sparseScan accepts
// what Exceptions accepts and AddSparse tallies what it visits.
func FuzzSparseScanAgrees(f *testing.F) {
	f.Add([]byte{0xc7, 0x01, 0xc6, 0x01, 0x05}, 400)
	f.Add([]byte{0x80, 0x00}, 400)
	f.Add([]byte{0xff, 0x7f, 0x01}, 20000)
	f.Fuzz(func(t *testing.T, bz []byte, n int) {
		sparseAgrees(t, bz, n)
	})
}

// BenchmarkCheckSparse is ve's check of one block's verdicts at 1% missed
// (CheckCompact on 150 sparse lists) through Exceptions (before) and
// sparseScan (now), side by side.
func BenchmarkCheckSparse(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		lists := make([][]byte, 150)
		for v := range lists {
			at := map[int]Verdict{n/2 + v: Unknown}
			for e := 0; e < n; e += 100 {
				at[e] = Miss
			}
			packed, _ := Pack(list(n, at))
			lists[v], _ = Compact(packed, n)
		}
		for _, impl := range []struct {
			name  string
			check func([]byte, int) error
		}{{"exceptions", func(bz []byte, n int) error { return Exceptions(bz, n, nil) }}, {"scan", CheckCompact}} {
			b.Run(fmt.Sprintf("executors=%d/impl=%s", n, impl.name), func(b *testing.B) {
				for b.Loop() {
					for _, bz := range lists {
						if err := impl.check(bz, n); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
