package verdict

// Every block checks every validator's sparse list (ve's check of each
// extension) and the tally reads each distinct one again: at 150
// validators x 10,000 executors with 1% missed, 100 two-byte exceptions
// a list (a gap of 99 needs two varint bytes). sparseScan is that read as
// one loop that makes no call and does not branch on the width of a gap
// (one byte under 64, two under 8,192: on honest lists, often either);
// anything else (a longer varint, the last byte of the list, what fails)
// goes to NextException, the reference reader, exception by exception.

// AddSparse reads a sparse list of n verdicts (IsSparse) as Exceptions
// does, and adds p to miss[i] for each Miss at i and to unknown[i] for
// each Unknown (both of length n). On failure it returns Exceptions'
// error, and the sums may hold part of the list. It does not allocate.
func AddSparse(bz []byte, n int, p uint64, miss, unknown []uint64) error {
	if len(miss) < n || len(unknown) < n {
		return ErrLength
	}
	if !sparseScan(bz, n, miss[:n], unknown[:n], p) {
		return Exceptions(bz, n, nil)
	}
	return nil
}

// sparseScan is Exceptions(bz, n, nil) == nil, and with sums (not nil)
// AddSparse's additions; TestSparseScanAgreesWithExceptions and
// FuzzSparseScanAgrees hold it to Exceptions.
func sparseScan(bz []byte, n int, miss, unknown []uint64, p uint64) bool {
	if !IsSparse(bz, n) {
		return false
	}
	pos, next := 0, 0
	for {
		pos, next = sparseRun(bz, pos, next, n, miss, unknown, p)
		if pos == len(bz) {
			return true
		}
		i, v, rest, err := NextException(bz[pos:], next, n)
		if err != nil {
			return false
		}
		if miss != nil {
			m := uint64(v) >> 1 // Miss is 2, Unknown 0
			miss[i] += p * m
			unknown[i] += p * (1 - m)
		}
		pos, next = len(bz)-len(rest), i+1
	}
}

// sparseRun reads exceptions from bz[pos:], the rest of a sparse list of n
// whose next exception is at index next or later, while they are common
// ones: a gap of one or two varint bytes, with a byte after the first (so
// reading a second is safe). It returns where it stopped and the index
// after the last exception read, adding p to miss or unknown (when not
// nil) as AddSparse does.
func sparseRun(bz []byte, pos, next, n int, miss, unknown []uint64, p uint64) (int, int) {
	for pos < len(bz)-1 {
		c0, c1 := uint(bz[pos]), uint(bz[pos+1])
		long := c0 >> 7 // the gap takes two bytes
		// A second varint byte must end the varint and not be 0 (minimal).
		bad := long & b2u(c1-1 >= 0x7f)
		c := c0&0x7f | c1<<7&-long
		gap := c >> 1
		if bad != 0 || gap >= uint(n-next) {
			break
		}
		i := next + int(gap)
		if miss != nil {
			m := uint64(c & 1)
			miss[i] += p * m
			unknown[i] += p * (1 - m)
		}
		pos, next = pos+1+int(long), i+1
	}
	return pos, next
}

// b2u is 1 for true, 0 for false, without a branch.
func b2u(b bool) uint {
	var u uint
	if b {
		u = 1
	}
	return u
}
