package proposals

import (
	"bytes"
	"context"
	"fmt"
)

// Layout is a bundle's wire layout, the digit of its prefix. Both carry
// the protobuf HealthBundle; they differ in how field 5 (the extensions'
// frame) is compressed. HEALTH1 (the whole extended commit, packed
// verdicts) is no longer read.
type Layout uint8

const (
	// LayoutV2 (HEALTH2): the extensions' frame as one raw DEFLATE stream.
	// Blocks before the switch height carry it (SwitchHeight).
	LayoutV2 Layout = 2
	// LayoutV3 (HEALTH3): the extensions' frame as one zstd frame.
	LayoutV3 Layout = 3
)

func (l Layout) String() string {
	if p, ok := prefixOf(l); ok {
		return string(p[1:])
	}
	return fmt.Sprintf("layout %d", uint8(l))
}

// prefixV2 and prefixV3 start every injected bundle, by layout. 0xff
// begins a protobuf tag whose wire type (the low three bits of the varint
// 0x7f|'H'<<7) is 7, which does not exist: no protobuf transaction decoder
// can accept these bytes, so a bundle can never pass for a user
// transaction, nor a transaction for a bundle. Both have the same length.
var (
	prefixV2 = []byte("\xffHEALTH2")
	prefixV3 = []byte("\xffHEALTH3")
)

// prefixOf is the prefix of a known layout.
func prefixOf(l Layout) ([]byte, bool) {
	switch l {
	case LayoutV2:
		return prefixV2, true
	case LayoutV3:
		return prefixV3, true
	}
	return nil, false
}

// layoutOf is the layout whose prefix starts tx.
func layoutOf(tx []byte) (Layout, bool) {
	switch {
	case bytes.HasPrefix(tx, prefixV3):
		return LayoutV3, true
	case bytes.HasPrefix(tx, prefixV2):
		return LayoutV2, true
	}
	return 0, false
}

// Switch is where the chain records which layout its blocks carry: the
// height from which they carry HEALTH3 (x/inference's bundle_v3_height,
// the keeper's BundleV3Switch); set is false on a chain whose state
// predates the record, which carries HEALTH2 throughout. This package
// reads it through this interface only, never the module.
type Switch interface {
	BundleV3Switch(ctx context.Context) (height int64, set bool, err error)
}

// LayoutAt is the layout the bundle of the block at height must be in:
// HEALTH3 from the switch height on, HEALTH2 before it (and on a chain
// without a switch height). ctx is the state the block is proposed on.
func LayoutAt(ctx context.Context, sw Switch, height int64) (Layout, error) {
	from, set, err := sw.BundleV3Switch(ctx)
	if err != nil {
		return 0, fmt.Errorf("bundle layout at height %d: %w", height, err)
	}
	if set && height >= from {
		return LayoutV3, nil
	}
	return LayoutV2, nil
}
