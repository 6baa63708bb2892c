package service

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkedAgrees compares CheckList with Check on one list (the error's
// words included) and, when it accepts, the tally of its decoding with
// want, the tally scan made of the list at power 7; the buffer it appends
// to keeps what it held.
func checkedAgrees(t testing.TB, bz []byte, n int, want [][2]uint64) {
	t.Helper()
	buf := make([]uint32, 3, 3+MaxExceptions)
	copy(buf, []uint32{1, 2, 3})
	c, buf, err := CheckList(bz, n, buf)
	if fmt.Sprint(err) != fmt.Sprint(Check(bz, n)) {
		t.Fatalf("CheckList(%x, %d) = %v, Check %v", bz, n, err, Check(bz, n))
	}
	if !slices.Equal(buf[:3], []uint32{1, 2, 3}) || len(buf) != 3+len(c.ex) {
		t.Fatalf("CheckList(%x, %d) changed the buffer's earlier entries or length", bz, n)
	}
	if err != nil || len(bz) == 0 {
		if len(c.ex) != 0 || c.Decodes(bz, n) {
			t.Fatalf("CheckList(%x, %d) refused or empty, yet a decoding", bz, n)
		}
		return
	}
	if !c.Decodes(bz, n) || c.Decodes(bz, n+1) || c.Decodes(bytes.Clone(bz), n) {
		t.Fatalf("CheckList(%x, %d): decodes the wrong lists", bz, n)
	}
	got := tally{sums: make([][2]uint64, n)}
	got.addChecked(c, 7)
	if !slices.Equal(got.sums, want) {
		t.Fatalf("CheckList(%x, %d): the decoding tallies otherwise than the list", bz, n)
	}
}

// TestMedianOfCheckedEqualsMedianOfLists: on random commits (the
// differential test's generator: every density, duplicates, validators
// without a list, corrupted lists), Median, Encoded and Suspected give the
// same rates, bytes, flags and errors whether or not the votes carry the
// decoding of their lists. A decoding that does not stand for the vote's
// list is ignored, never tallied (attacks: a decoding moved to another
// vote, one made for another group size, a copy of the list with a byte
// changed after its check, a list swapped after its check).
func TestMedianOfCheckedEqualsMedianOfLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	for run := range 1500 {
		n := rng.IntN(300)
		if run%300 == 0 {
			n = 10000
		}
		votes, total := randomServiceCommit(t, rng, n)
		if rng.IntN(4) == 0 {
			corruptReports(rng, votes, n)
		}
		checked := slices.Clone(votes)
		var buf []uint32
		for i := range checked {
			checked[i].Checked, buf, _ = CheckList(checked[i].Reports, n, buf)
		}
		if !sameWithAndWithoutChecked(t, checked, total, n) {
			t.Fatalf("run %d: the decodings change the result", run)
		}
		if len(checked) < 2 {
			continue
		}
		switch i, j := rng.IntN(len(checked)), rng.IntN(len(checked)); rng.IntN(4) {
		case 0: // a decoding moved to another vote
			checked[i].Checked = checked[j].Checked
		case 1: // a decoding for another group size
			checked[i].Checked, _, _ = CheckList(checked[i].Reports, n+1, nil)
		case 2: // the list changed after its check, in a copy
			if bz := bytes.Clone(checked[i].Reports); len(bz) > 1 {
				bz[len(bz)-1] ^= 1
				checked[i].Reports = bz
			}
		default: // lists swapped after their check
			checked[i].Reports, checked[j].Reports = checked[j].Reports, checked[i].Reports
		}
		if !sameWithAndWithoutChecked(t, checked, total, n) {
			t.Fatalf("run %d: a decoding that is not the vote's list was tallied", run)
		}
	}
}

// sameWithAndWithoutChecked compares Median, Encoded and Suspected of
// votes with their decodings and without, reporting any difference.
func sameWithAndWithoutChecked(t *testing.T, votes []Vote, total uint64, n int) bool {
	t.Helper()
	plain := withoutChecked(votes)
	got, err := Median(votes, total, n)
	want, wantErr := Median(plain, total, n)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(got, want) {
		t.Errorf("Median with decodings %v (%v), without %v (%v)", got, err, want, wantErr)
		return false
	}
	gotBz, err := Encoded(votes, total, n)
	wantBz, wantErr := Encoded(plain, total, n)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(gotBz, wantBz) {
		t.Errorf("Encoded with decodings %x (%v), without %x (%v)", gotBz, err, wantBz, wantErr)
		return false
	}
	// Encoded's one pass over settled executors is Encode of the median.
	if wantErr == nil {
		wantBz, wantErr = Encode(want)
	}
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(gotBz, wantBz) {
		t.Errorf("Encoded %x (%v), Encode(Median) %x (%v)", gotBz, err, wantBz, wantErr)
		return false
	}
	flags, err := Suspected(votes, total, n, -1)
	wantFlags, wantErr := Suspected(plain, total, n, -1)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !slices.Equal(flags, wantFlags) {
		t.Errorf("Suspected with decodings %v (%v), without %v (%v)", flags, err, wantFlags, wantErr)
		return false
	}
	return true
}

func withoutChecked(votes []Vote) []Vote {
	out := slices.Clone(votes)
	for i := range out {
		out[i].Checked = Checked{}
	}
	return out
}

// BenchmarkMedianOfChecked is the block's median from the lists (before)
// and from ve's decodings of them (now), 150 honest validators.
func BenchmarkMedianOfChecked(b *testing.B) {
	for _, sc := range []string{"honest", "10pct-high"} {
		for _, n := range []int{1000, 10000} {
			votes, total := honestVotes(b, sc, 150, n)
			checked := slices.Clone(votes)
			var buf []uint32
			for i := range checked {
				var err error
				if checked[i].Checked, buf, err = CheckList(checked[i].Reports, n, buf); err != nil {
					b.Fatal(err)
				}
			}
			for _, impl := range []struct {
				name  string
				votes []Vote
			}{{"lists", votes}, {"checked", checked}} {
				b.Run(fmt.Sprintf("scenario=%s/executors=%d/from=%s", sc, n, impl.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := Encoded(impl.votes, total, n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
