package breaker

import "math/bits"

// MaxWindow is the longest window a Window can hold: one bit per sample.
const MaxWindow = 64

// Window is the recent history of one kind of sample: bit i is the i-th most
// recent sample (1 = miss), Count is how many samples it holds (at most
// MaxWindow; older ones fall off).
type Window struct {
	Bits  uint64
	Count uint32
}

// Push records one sample as the most recent.
func (w Window) Push(miss bool) Window {
	w.Bits <<= 1
	if miss {
		w.Bits |= 1
	}
	if w.Count < MaxWindow {
		w.Count++
	}
	return w
}

// Last returns how many samples and misses the window holds among its n most
// recent samples.
func (w Window) Last(n uint32) (samples, misses uint32) {
	samples = min(n, w.Count, MaxWindow)
	if samples == 0 {
		return 0, 0
	}
	mask := ^uint64(0)
	if samples < MaxWindow {
		mask = 1<<samples - 1
	}
	return samples, uint32(bits.OnesCount64(w.Bits & mask))
}

// TrailingMisses is the length of the current run of misses.
func (w Window) TrailingMisses() uint32 {
	return min(uint32(bits.TrailingZeros64(^w.Bits)), w.Count)
}

// HasMiss reports whether any held sample is a miss.
func (w Window) HasMiss() bool {
	_, m := w.Last(MaxWindow)
	return m > 0
}

// Prefilled is a window holding n successes, the history of an executor
// that has no record because it has not missed recently.
func Prefilled(n uint64) Window { return Window{Count: Fill(n)} }

// Fill is how many of n successes a window holds: all, up to a full
// window. The one clamp of a success count to a window (a count stored as
// a new record's history, or read from an executor's epoch stats).
func Fill(n uint64) uint32 { return uint32(min(n, MaxWindow)) }
