package service

// Checked is a list of reports that CheckList accepted, with its
// exceptions decoded: ve checks each extension's list once and the median
// tallies the decoded exceptions, a loop with no parsing and no check,
// instead of reading the list a second time. Only CheckList makes one
// with exceptions; the zero value stands for no decoding.
type Checked struct {
	list []byte   // the bytes it was decoded from (aliased, not copied)
	n    int      // the group size it was checked against
	ex   []uint32 // each exception: index<<1 | 1 when Unknown
}

// CheckList is Check(bz, n), and returns the list it accepted decoded,
// with its exceptions appended to buf (and buf as it is then, for the
// next list: one buffer serves a whole commit, in chunks that double; the
// Checked aliases it). The
// decoding stands for bz as it is now: bz must not change while the
// Checked is in use.
func CheckList(bz []byte, n int, buf []uint32) (Checked, []uint32, error) {
	if len(bz) == 0 {
		return Checked{}, buf, Check(bz, n)
	}
	if cap(buf)-len(buf) < MaxExceptions {
		// A new chunk, twice the last: what earlier lists' decodings
		// alias stays where it is, nothing is copied.
		buf = make([]uint32, 0, max(16*MaxExceptions, 2*cap(buf)))
	}
	ex := buf[len(buf) : len(buf)+MaxExceptions]
	unknowns, count, ok := scan(bz, n, sink{ex: ex})
	if !ok || unknowns == n {
		return Checked{}, buf, checkEach(bz, n)
	}
	return Checked{list: bz, n: n, ex: ex[:count:count]}, buf[:len(buf)+count], nil
}

// Decodes reports whether c is the decoding of bz, a non-empty list of n:
// made by CheckList from the same bytes (the same memory, not equal
// bytes) against the same group size.
func (c Checked) Decodes(bz []byte, n int) bool {
	return len(bz) > 0 && len(c.list) == len(bz) && &c.list[0] == &bz[0] && c.n == n
}

// addChecked adds power p to the sums of each decoded exception of c, a
// list of len(t.sums) (Decodes).
func (t *tally) addChecked(c Checked, p uint64) {
	sums := t.sums
	for _, x := range c.ex {
		sums[x>>1][x&1] += p
	}
}
