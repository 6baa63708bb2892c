package a

import (
	"maps"
	"slices"
	"sort"
)

type weights map[string]uint64

func tallies() map[string]int { return map[string]int{"a": 1} }

func walks(m map[string]int, w weights, s []int, ch chan int) int {
	total := 0
	for k := range m { // want "range over a map"
		total += len(k)
	}
	for _, v := range w { // want "range over a map"
		total += int(v)
	}
	for _, v := range tallies() { // want "range over a map"
		total += v
	}
	keys := make([]string, 0, len(m))
	for k := range m { // want "range over a map"
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		total += m[k]
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		total += m[k]
	}
	for _, v := range s {
		total += v
	}
	for range "abc" {
		total++
	}
	for i := range 3 {
		total += i
	}
	for v := range ch {
		total += v
	}
	return total
}
