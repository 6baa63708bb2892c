package main

import (
	"fmt"
	"strconv"
	"strings"
)

// maxIndexSpecBytes bounds an executor set as the control API takes it.
const maxIndexSpecBytes = 16 << 10

// parseIndexes reads a set of executor indexes written as comma-separated
// indexes and inclusive ranges ("0-9,15,20-29") and returns them in
// ascending order, each once. Every index must be below size. The work is
// bounded by the spec's length and by size, whatever the spec says: a
// range is checked against size before it is expanded.
func parseIndexes(spec string, size int) ([]int, error) {
	if len(spec) > maxIndexSpecBytes {
		return nil, fmt.Errorf("executor set longer than %d bytes", maxIndexSpecBytes)
	}
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("empty executor set")
	}
	in := make([]bool, size)
	for _, part := range strings.Split(spec, ",") {
		lo, hi, err := parseRange(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if hi >= size {
			return nil, fmt.Errorf("executor %d out of range: the fleet has %d (0..%d)", hi, size, size-1)
		}
		for i := lo; i <= hi; i++ {
			in[i] = true
		}
	}
	var out []int
	for i, ok := range in {
		if ok {
			out = append(out, i)
		}
	}
	return out, nil
}

// parseRange reads "a" or "a-b" (a <= b), both non-negative integers.
func parseRange(part string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(part, "-")
	if lo, err = parseIndex(a); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseIndex(b); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %q runs backwards", part)
	}
	return lo, hi, nil
}

func parseIndex(s string) (int, error) {
	// Digits only: no sign, no spaces inside, no hex.
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("executor index %q is not a decimal number", s)
	}
	return strconv.Atoi(s)
}

// formatIndexes writes indexes (ascending) in the form parseIndexes reads,
// runs collapsed into ranges.
func formatIndexes(indexes []int) string {
	var b strings.Builder
	for k := 0; k < len(indexes); {
		end := k
		for end+1 < len(indexes) && indexes[end+1] == indexes[end]+1 {
			end++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(indexes[k]))
		if end > k {
			b.WriteString("-" + strconv.Itoa(indexes[end]))
		}
		k = end + 1
	}
	return b.String()
}
