package proposals

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/klauspost/compress/zstd"

	"github.com/inferenced/inferenced/abci/ve"
)

// zstdStream compresses body as one zstd frame the way a streaming
// encoder does: no content size declared, the given window (a power of two
// of at least 1 KiB).
func zstdStream(tb testing.TB, body []byte, window int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(window),
		zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// zstdWith compresses body in one call (EncodeAll: content size declared)
// with the given encoder options.
func zstdWith(tb testing.TB, body []byte, opts ...zstd.EOption) []byte {
	tb.Helper()
	enc, err := zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return enc.EncodeAll(body, nil)
}

// Hand-made frames (RFC 8878): a header of magic, descriptor and the given
// fields, then blocks.
func zframe(fhd byte, fields []byte, blocks ...[]byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	out = append(append(out, fhd), fields...)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return out
}

// zblock is a block header of kind (0 raw, 1 RLE, 2 compressed, 3
// reserved) and size, then payload.
func zblock(last bool, kind, size int, payload []byte) []byte {
	h := uint32(size)<<3 | uint32(kind)<<1
	if last {
		h |= 1
	}
	return append([]byte{byte(h), byte(h >> 8), byte(h >> 16)}, payload...)
}

func rawBlock(last bool, data []byte) []byte { return zblock(last, 0, len(data), data) }

// singleSegment is a single-segment frame declaring size (< 256) in a
// one-byte content size field, carrying blocks.
func singleSegment(size byte, blocks ...[]byte) []byte { return zframe(0x20, []byte{size}, blocks...) }

// skippable is a skippable frame of n zero bytes.
func skippable(n int) []byte {
	out := binary.LittleEndian.AppendUint32(nil, zstdSkippableMagic|0x7)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	return append(out, make([]byte, n)...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// One named case per attack on the zstd frame a HEALTH3 bundle carries,
// each refused for its own reason before anything is verified; then the
// frames any encoder may produce, all accepted.
func TestZstdVotesRejectAttacks(t *testing.T) {
	good := sampleBundle(t, LayoutV3)
	ec := sampleCommit(t)
	last := CommitInfoOf(ec)
	ext := ec.Votes[0].VoteExtension
	body := appendFrame(nil, [][]byte{ext})
	limit := frameEntrySize(ve.MaxSize(2)) // what one vote may decode to
	with := func(exts []byte) Bundle {
		b := good
		b.extensions = exts
		return b
	}
	crc := zstdWith(t, body, zstd.WithEncoderCRC(true))
	badCRC := append([]byte{}, crc...)
	badCRC[len(badCRC)-1] ^= 0xff
	cases := []struct {
		name string
		b    Bundle
		want error
	}{
		// The cap: every one refused by ErrInflateCap, most before a block
		// is decoded.
		{"decompression bomb declaring its size", with(zstdWith(t, make([]byte, 10<<20))), ErrInflateCap},
		{"decompression bomb declaring no size", with(zstdStream(t, make([]byte, 10<<20), 1<<10)), ErrInflateCap},
		{"declares one byte past the cap", with(zstdWith(t, make([]byte, limit+1))), ErrInflateCap},
		{"decodes to one byte past the cap, size not declared", with(zstdStream(t, make([]byte, limit+1), 1<<10)), ErrInflateCap},
		{"declares a size past the cap over a small content", with(zframe(0x60, binary.LittleEndian.AppendUint16(nil, uint16(limit+1-256)),
			rawBlock(true, body))), ErrInflateCap},
		{"raw blocks past the cap", with(zframe(0x00, []byte{0x00}, rawBlock(false, make([]byte, limit)), rawBlock(true, []byte{0}))), ErrInflateCap},
		{"an RLE block past the cap", with(zframe(0x00, []byte{0x00}, zblock(true, 1, limit+1, []byte{0}))), ErrInflateCap},
		// The frame's structure.
		{"truncated frame", with(good.extensions[:len(good.extensions)-1]), errZstdTruncated},
		{"truncated header", with(good.extensions[:5]), errZstdTruncated},
		{"a byte after the frame", with(cat(good.extensions, []byte{0})), errZstdTrailing},
		{"two frames", with(cat(good.extensions, good.extensions)), errZstdTrailing},
		{"a frame that decodes to nothing after the frame", with(cat(good.extensions, singleSegment(0, rawBlock(true, nil)))), errZstdTrailing},
		{"a skippable frame alone", with(skippable(8)), errZstdSkippable},
		{"a skippable frame before the frame", with(cat(skippable(8), good.extensions)), errZstdSkippable},
		{"a skippable frame after the frame", with(cat(good.extensions, skippable(8))), errZstdTrailing},
		{"asks for a dictionary", with(zframe(0x21, []byte{7, byte(len(body))}, rawBlock(true, body))), errZstdDict},
		{"names dictionary 0", with(zframe(0x21, []byte{0, byte(len(body))}, rawBlock(true, body))), errZstdDict},
		{"declares a window larger than the cap (2 KiB)", with(zframe(0x00, []byte{0x08}, rawBlock(true, body))), errZstdWindow},
		{"declares a window larger than the cap (8 MiB, a streaming encoder's default)", with(zframe(0x00, []byte{0x68}, rawBlock(true, body))), errZstdWindow},
		{"reserved header bit", with(zframe(0x28, []byte{byte(len(body))}, rawBlock(true, body))), errZstdHeader},
		{"unused header bit", with(zframe(0x30, []byte{byte(len(body))}, rawBlock(true, body))), errZstdHeader},
		{"reserved block type", with(singleSegment(byte(len(body)), zblock(true, 3, len(body), body))), errZstdBlock},
		{"a block over 128 KiB", with(zframe(0x00, []byte{0x00}, zblock(true, 2, zstdMaxBlock+1, nil))), errZstdBlock},
		{"not zstd (a DEFLATE stream)", with(stream(t, body, 6)), errNotZstd},
		{"empty", with(nil), errNotZstd},
		// What only decoding finds.
		{"compressed block whose literals overrun it", with(singleSegment(5, zblock(true, 2, 2, []byte{5 << 3, 0}))), errZstdDecode},
		{"checksum mismatch", with(badCRC), errZstdDecode},
		{"declared size larger than the content", with(singleSegment(byte(len(body)+1), rawBlock(true, body))), errZstdDecode},
		{"compressed block too small", with(singleSegment(0, zblock(true, 2, 1, []byte{0}))), errZstdDecode},
		// What it decodes to: the frame of votes, checked as in HEALTH2.
		{"one extension too many", with(zstdWith(t, cat(body, body))), ErrBadBundle},
		{"one extension too few", with(singleSegment(0, rawBlock(true, nil))), ErrBadBundle},
	}
	for _, c := range cases {
		_, err := c.b.Commit(last)
		if !errors.Is(err, c.want) || !errors.Is(err, ErrBadBundle) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The compressed bytes are the proposer's choice: any level, with or
	// without a checksum or a declared size, hand-made raw and RLE blocks,
	// all decode to the same votes and are accepted alike.
	accepted := map[string][]byte{
		"fastest":                          zstdWith(t, body, zstd.WithEncoderLevel(zstd.SpeedFastest)),
		"default":                          zstdWith(t, body, zstd.WithEncoderLevel(zstd.SpeedDefault)),
		"better":                           zstdWith(t, body, zstd.WithEncoderLevel(zstd.SpeedBetterCompression)),
		"best":                             zstdWith(t, body, zstd.WithEncoderLevel(zstd.SpeedBestCompression)),
		"with a checksum":                  crc,
		"streamed, no declared size":       zstdStream(t, body, 1<<10),
		"a 1 KiB window, no declared size": zframe(0x00, []byte{0x00}, rawBlock(true, body)),
		"raw blocks":                       singleSegment(byte(len(body)), rawBlock(false, body[:2]), rawBlock(true, body[2:])),
		"an empty raw block, then raw":     singleSegment(byte(len(body)), rawBlock(false, nil), rawBlock(true, body)),
	}
	for name, frame := range accepted {
		if _, err := with(frame).Commit(last); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestZstdBombCostsNoMoreThanTheCap (attack: a proposer's decompression
// bomb makes every validator allocate what it decodes to): 256 MiB of
// zeros in one frame that declares no size, under the cap of 150 votes at
// 10,000 executors (~3 MB). Decoding stops at the first 128 KiB block past
// the cap: allocations stay within a small multiple of the cap (the output
// grows by doubling), not the bomb's size. It starts no goroutine.
func TestZstdBombCostsNoMoreThanTheCap(t *testing.T) {
	const votes, members = 150, 10000
	limit := votes * frameEntrySize(ve.MaxSize(members))
	bomb := zstdStream(t, make([]byte, 256<<20), 1<<17)
	b := Bundle{Layout: LayoutV3, Epoch: 1, Members: members, extensions: bomb, signatures: bytes.Repeat([]byte{0}, votes)}
	last := abci.CommitInfo{Votes: make([]abci.VoteInfo, votes)}
	var before, after runtime.MemStats
	runtime.GC()
	goroutines := runtime.NumGoroutine()
	runtime.ReadMemStats(&before)
	_, err := b.Commit(last)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInflateCap) {
		t.Fatalf("bomb of %d bytes: %v, want %v", len(bomb), err, ErrInflateCap)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > uint64(4*(limit+zstdMaxBlock)) {
		t.Fatalf("the bomb allocated %d bytes; the cap is %d", alloc, limit)
	}
	if n := runtime.NumGoroutine(); n != goroutines {
		t.Fatalf("%d goroutines after decoding, %d before", n, goroutines)
	}
	t.Logf("bomb: %d bytes compressed, refused after allocating %d bytes (cap %d)", len(bomb), alloc, limit)
}

// FuzzZstdFrame: the HEALTH3 decoder on any stream and cap: never panics,
// never returns more than the cap; what it accepts is exactly what an
// unrestricted decoder makes of the same bytes, and what it refuses for
// the cap an unrestricted decoder cannot decode within the cap either.
//
//	go test -run '^$' -fuzz '^FuzzZstdFrame$' -fuzztime 60s ./abci/proposals/
func FuzzZstdFrame(f *testing.F) {
	body := appendFrame(nil, [][]byte{sampleCommit(f).Votes[0].VoteExtension})
	f.Add(sampleBundle(f, LayoutV3).extensions, 1000)
	f.Add(zstdWith(f, body, zstd.WithEncoderCRC(true)), 100)
	f.Add(zstdStream(f, bytes.Repeat(body, 1000), 1<<10), 1<<20)
	f.Add(zstdWith(f, bytes.Repeat([]byte("abcdefgh"), 40000)), 300000)
	f.Add(singleSegment(byte(len(body)), rawBlock(false, body[:2]), rawBlock(true, body[2:])), 20)
	f.Add(cat(skippable(4), singleSegment(0, rawBlock(true, nil))), 20)
	f.Add(zframe(0x00, []byte{0x00}, zblock(true, 1, 300, []byte{7})), 299)
	reference, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stream []byte, limit int) {
		if limit < 0 || limit > 4<<20 {
			return
		}
		got, err := decompressZstd(stream, limit)
		want, refErr := reference.DecodeAll(stream, nil)
		switch {
		case err == nil:
			if len(got) > limit {
				t.Fatalf("accepted %d bytes past the cap %d", len(got), limit)
			}
			if refErr != nil || !bytes.Equal(got, want) {
				t.Fatalf("accepted %d bytes; the reference decodes %d (%v)", len(got), len(want), refErr)
			}
		case errors.Is(err, ErrInflateCap):
			if refErr == nil && len(want) <= limit {
				t.Fatalf("refused for the cap %d; the reference decodes %d bytes", limit, len(want))
			}
		case !errors.Is(err, ErrBadBundle):
			t.Fatalf("refused without ErrBadBundle: %v", err)
		}
	})
}
