package breakerstore

import (
	"slices"
	"testing"
)

func TestBitmap(t *testing.T) {
	var b bitmap
	for _, i := range []uint32{3, 17, 0, 8, 17} {
		b = b.with(i)
	}
	var got []uint32
	if err := b.each(func(i uint32) error { got = append(got, i); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []uint32{0, 3, 8, 17}) {
		t.Fatalf("each: %v", got)
	}
	if !b.has(17) || b.has(16) || b.has(1000) {
		t.Fatal("has")
	}
	if c := b.minus(bitmap(nil).with(17)); len(c) != 2 || c.has(17) || !c.has(8) {
		t.Fatalf("minus keeps no trailing zero byte: %x", []byte(c))
	}
	if u := bitmap(nil).with(1).union(bitmap(nil).with(20)); !u.has(1) || !u.has(20) || len(u) != 3 {
		t.Fatalf("union: %x", []byte(u))
	}
	b = b.without(17)
	if len(b) != 2 || b.without(8).without(3).without(0) != nil {
		t.Fatalf("without is canonical: %x", []byte(b))
	}
	if !bitmap(nil).with(2).subsetOf(bitmap(nil).with(2).with(9)) || bitmap(nil).with(9).subsetOf(bitmap(nil).with(2)) {
		t.Fatal("subsetOf")
	}
}
