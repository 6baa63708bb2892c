package service

// Every block checks every validator's list (ve's check of each extension)
// and tallies it (Median): 150 lists of up to MaxExceptions exceptions,
// read twice. scan is that read as one loop with no call per exception,
// and without a branch on what a well-formed exception holds: whether it
// is unknown or a rate, and whether its gap takes one byte or two, are
// both near coin flips on honest lists (about a fifth of the gaps of a
// list of 250 over 10,000 executors are 64 or more), so both are
// arithmetic here; only what fails, or is rare (a gap of 8,192 or more,
// the last exceptions of a list), branches, and it goes to NextException,
// the reference reader, exception by exception.

// sink is what scan does with each exception of a list: add p to its
// sums (sums[i][1] for an Unknown at i, sums[i][0] for a rate above 0%;
// len n), and write it to ex (index<<1 | 1 when Unknown; len
// MaxExceptions), each when not nil.
type sink struct {
	sums [][2]uint64
	p    uint64
	ex   []uint32
}

// scan reads a non-empty encoded list of n reports, accepting exactly what
// Each accepts, puts each exception in s, and returns how many there are
// and how many of them are Unknown. ok is false when Each fails (call it,
// or Check, for the error); s may then hold part of the list. It does
// not allocate.
func scan(bz []byte, n int, s sink) (unknowns, count int, ok bool) {
	if n < 0 || len(bz) == 0 || len(bz) > MaxLen(n) || bz[0] != marker {
		return 0, 0, false
	}
	if s.sums != nil {
		s.sums = s.sums[:n]
	}
	if s.ex != nil {
		s.ex = s.ex[:MaxExceptions]
	}
	pos, next := 1, 0
	for {
		var read, u int
		pos, next, read, u = scanRun(bz, pos, next, n, MaxExceptions-count, s)
		count, unknowns = count+read, unknowns+u
		if s.ex != nil {
			s.ex = s.ex[read:]
		}
		if pos == len(bz) {
			return unknowns, count, true
		}
		if count == MaxExceptions {
			return 0, 0, false
		}
		// Anything else, valid or not: the reference reader judges.
		i, r, rest, err := NextException(bz[pos:], next, n)
		if err != nil {
			return 0, 0, false
		}
		v := b2u(r == Unknown)
		if s.sums != nil {
			s.sums[i][v] += s.p
		}
		if s.ex != nil {
			s.ex[0], s.ex = uint32(i)<<1|uint32(v), s.ex[1:]
		}
		pos, next, count, unknowns = len(bz)-len(rest), i+1, count+1, unknowns+int(v)
	}
}

// scanRun reads at most budget exceptions from bz[pos:], the rest of a
// list of n whose next exception is at index next or later, while they
// are common ones: a gap of one or two varint bytes, and two bytes after
// its first, so that reading its rate (at pos+1 or pos+2) is safe. It
// returns where it stopped, the index after the last exception read, how
// many it read and how many of them are Unknown, putting them in s as
// scan does (s.ex from its start). It makes no call, so the loop keeps its
// values in registers.
func scanRun(bz []byte, pos, next, n, budget int, s sink) (int, int, int, int) {
	read, unknowns := 0, 0
	for ; read < budget && pos < len(bz)-2; read++ {
		c0, c1 := uint(bz[pos]), uint(bz[pos+1])
		long := c0 >> 7
		c := c0&0x7f | c1<<7&-long
		u := c & 1
		r := uint(bz[pos+1+int(long&1)])
		// A second gap byte must end the varint and not be 0; a rate is
		// in 1..MaxRate.
		bad := long&b2u(c1-1 >= 0x7f) | (1-u)&b2u(r-1 >= uint(MaxRate))
		gap := c >> 1
		if bad != 0 || gap >= uint(n-next) {
			break
		}
		i := next + int(gap)
		if s.sums != nil {
			s.sums[i][u] += s.p
		}
		if s.ex != nil {
			s.ex[read] = uint32(i)<<1 | uint32(u)
		}
		pos += 2 + int(long) - int(u)
		next, unknowns = i+1, unknowns+int(u)
	}
	return pos, next, read, unknowns
}

// b2u is 1 for true, 0 for false, without a branch.
func b2u(b bool) uint {
	var u uint
	if b {
		u = 1
	}
	return u
}
