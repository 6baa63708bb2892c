package breakerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/types"
)

// streaks is the one copy of the two record fields that would otherwise
// move in every block while an executor's verdict stays the same (the
// `Streaks` item, types.StreaksKey): the evidence ledger's AttestedMissAt,
// which every attested or service miss sets to the block's height, and
// the record's ServiceOkAt, which every service ok sets. The step leaves
// a sample out of the record when the judge would change nothing else
// (quiet, heldBits) and sets the executor's bit here instead.
//
// Effective record (apply): a stored record of the group's member i reads
// with AttestedMissAt = missAt if miss has i (and no AttestedCredited
// unless the stored AttestedMissAt already was missAt: a new height resets
// it, as evidence.Ledger.AttestedMiss does), and ServiceOkAt = okAt if ok
// has i; the stored values otherwise.
//
// Invariants: the epoch is the current one (Clear drops the item at the
// boundary, so its indices are the current group's); every set bit is a
// member with a record (save clears an executor's bits when its record is
// created or dropped); no stored record holds either field above the
// height its bitmap carries; an empty bitmap carries height 0, and an
// item with both bitmaps empty is not stored. Bound: each bitmap is one
// bit per group index.
type streaks struct {
	epoch  uint64
	missAt int64  // the height the misses in miss were applied at
	miss   bitmap // executors whose AttestedMissAt is missAt
	okAt   int64  // the height the service oks in ok were applied at
	ok     bitmap // executors whose ServiceOkAt is okAt
}

// empty reports whether the item carries nothing (it is then not stored).
func (k streaks) empty() bool { return k.miss == nil && k.ok == nil }

// apply gives h, the stored record of the group's member at index i, its
// effective streak fields.
func (k streaks) apply(h *types.ExecutorHealth, i uint32) {
	if k.miss.has(i) && h.AttestedMissAt != k.missAt {
		h.AttestedMissAt, h.AttestedCredited = k.missAt, nil
	}
	if k.ok.has(i) {
		h.ServiceOkAt = k.okAt
	}
}

// equal reports whether two items are the same.
func (k streaks) equal(o streaks) bool {
	return k.epoch == o.epoch && k.missAt == o.missAt && k.okAt == o.okAt &&
		bytes.Equal(k.miss, o.miss) && bytes.Equal(k.ok, o.ok)
}

// has reports whether the item carries a field of member i.
func (k streaks) has(i uint32) bool { return k.miss.has(i) || k.ok.has(i) }

// without is the item with member i's bits cleared (a record created or
// dropped: its bits were about another record).
func (k streaks) without(i uint32) streaks {
	k.miss, k.ok = k.miss.without(i), k.ok.without(i)
	return k.normalized()
}

// normalized gives an empty bitmap height 0.
func (k streaks) normalized() streaks {
	if k.miss == nil {
		k.missAt = 0
	}
	if k.ok == nil {
		k.okAt = 0
	}
	return k
}

const streaksVersion = 1

// streaksCodec stores the item as: version (1 byte), epoch (uint64),
// missAt and okAt (int64), then miss and ok (appendBitmap), all
// big-endian; the decoder rejects anything else.
type streaksCodec struct{}

func (streaksCodec) Encode(k streaks) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+24+8+len(k.miss)+len(k.ok))
	out = append(out, streaksVersion)
	out = binary.BigEndian.AppendUint64(out, k.epoch)
	out = binary.BigEndian.AppendUint64(out, uint64(k.missAt))
	out = binary.BigEndian.AppendUint64(out, uint64(k.okAt))
	out = appendBitmap(out, k.miss)
	return appendBitmap(out, k.ok), nil
}

func (streaksCodec) Decode(in []byte) (streaks, error) {
	if len(in) < 25 || in[0] != streaksVersion {
		return streaks{}, errors.New("breaker streaks: not a version-1 item")
	}
	k := streaks{
		epoch:  binary.BigEndian.Uint64(in[1:]),
		missAt: int64(binary.BigEndian.Uint64(in[9:])),
		okAt:   int64(binary.BigEndian.Uint64(in[17:])),
	}
	rest := in[25:]
	var err error
	if k.miss, rest, err = readBitmap(rest); err != nil {
		return streaks{}, fmt.Errorf("breaker streaks misses: %w", err)
	}
	if k.ok, rest, err = readBitmap(rest); err != nil {
		return streaks{}, fmt.Errorf("breaker streaks service oks: %w", err)
	}
	if len(rest) != 0 {
		return streaks{}, fmt.Errorf("breaker streaks: %d bytes after the item", len(rest))
	}
	return k, k.check()
}

// check is the item's shape: a height exactly with its bitmap, and
// something carried.
func (k streaks) check() error {
	switch {
	case k.empty():
		return errors.New("breaker streaks: an empty item is never stored")
	case (k.miss == nil) != (k.missAt == 0), k.missAt < 0:
		return fmt.Errorf("breaker streaks: miss height %d with %d bitmap bytes", k.missAt, len(k.miss))
	case (k.ok == nil) != (k.okAt == 0), k.okAt < 0:
		return fmt.Errorf("breaker streaks: ok height %d with %d bitmap bytes", k.okAt, len(k.ok))
	}
	return nil
}

func (c streaksCodec) EncodeJSON(k streaks) ([]byte, error) { return encodeJSON(c.Encode, k) }

func (c streaksCodec) DecodeJSON(in []byte) (streaks, error) { return decodeJSON(c.Decode, in) }

func (streaksCodec) Stringify(k streaks) string {
	return fmt.Sprintf("streaks{epoch %d, misses at %d: %x, service oks at %d: %x}", k.epoch, k.missAt, []byte(k.miss), k.okAt, []byte(k.ok))
}

func (streaksCodec) ValueType() string { return "inference/breaker-streaks/v1" }
