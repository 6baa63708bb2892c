package proposals

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The HEALTH3 bundle carries its extensions' frame as ONE zstd frame
// (RFC 8878). The proposer compresses at zstdLevel, its own choice:
// validators check what the frame decodes to, never the compressed bytes.
// Decoding is strict and bounded before any block is decoded:
// checkZstdFrame walks the frame's headers and refuses everything but one
// plain frame that ends exactly where the stream ends, then the decoder,
// configured per call for the cap, decodes it synchronously.
//
// What the library's decoder options bound (klauspost/compress v1.19.1,
// zstd/decoder.go, framedec.go, blockdec.go, read for this; v1.18.0 bound
// the same, the diff to v1.19.1 only adds ResetWithOptions and restyles):
//   - WithDecoderMaxMemory(m): DecodeAll refuses a frame whose declared
//     content size exceeds m before decoding, and fails after the first
//     block that takes the output past m; a block regenerates at most
//     min(window, 128 KiB), so a frame without a declared size costs at most
//     m plus one block. It also caps the window (newFrameDec clamps the
//     maximum window to m), so m must be at least 1 KiB, the smallest
//     window a frame can declare: below it every frame fails.
//   - WithDecoderMaxWindow(w): frames declaring a larger window are refused
//     (ErrWindowSizeExceeded); with DecodeAll the window allocates nothing
//     (the output is the history), it bounds match offsets.
//   - WithDecoderConcurrency(1): one block decoder. DecodeAll never starts
//     a goroutine whatever this is; only the streaming reader (Reset with a
//     reader, concurrency above 1) does (decoder.go: startStreamDecoder).
//   - WithDecoderLowmem(true): smaller per-block buffers.
//
// The library itself skips skippable frames, decodes concatenated frames
// and loads dictionaries by ID; checkZstdFrame refuses all three before it
// is called. It writes a line to stderr (println) when a frame exceeds its
// limits; that is the library's, never read back and never in state.
const (
	zstdMagic = 0xFD2FB528
	// skippable frames have the magic 0x184D2A50 to 0x184D2A5F.
	zstdSkippableMask  = 0xFFFFFFF0
	zstdSkippableMagic = 0x184D2A50
	// zstdMaxBlock is the largest block a frame may carry (RFC 8878,
	// Block_Maximum_Size: at most 128 KiB).
	zstdMaxBlock = 128 << 10
)

// zstdLevel is the level the proposer encodes with (see README: chosen by
// measurement, BenchmarkExtensionCodecs).
const zstdLevel = zstd.SpeedBestCompression

var (
	errNotZstd       = errors.New("extensions are not a zstd frame")
	errZstdSkippable = errors.New("extensions are a skippable zstd frame")
	errZstdDict      = errors.New("extensions' zstd frame asks for a dictionary")
	errZstdWindow    = errors.New("extensions' zstd frame declares a window larger than the cap")
	errZstdHeader    = errors.New("extensions' zstd frame header uses a reserved bit")
	errZstdTruncated = errors.New("extensions' zstd frame is truncated")
	errZstdTrailing  = errors.New("bytes after the extensions' zstd frame")
	errZstdBlock     = errors.New("extensions' zstd frame has an invalid block")
	errZstdDecode    = errors.New("extensions' zstd frame does not decode")
)

// zstdEncoder is the proposer's encoder, built once: building one at the
// best level allocates about 44 MB of tables, more than compressing a
// block's frame costs. EncodeAll resets it for every frame (the output
// depends on the input alone) and runs on the caller's goroutine; with one
// encoder, concurrent callers take turns.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
})

// compressZstd compresses body as one zstd frame declaring its content
// size, without a checksum (the signatures protect the content).
func compressZstd(body []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil { // the library panics on an internal encoder error
			out, err = nil, fmt.Errorf("zstd encoder: %v", r)
		}
	}()
	enc, err := zstdEncoder()
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return enc.EncodeAll(body, nil), nil
}

// decompressZstd decodes stream, which must be exactly one zstd frame
// (checkZstdFrame), to at most limit bytes: a frame declaring more is
// refused before decoding, and decoding fails as soon as a block takes
// the output past the cap (ErrInflateCap).
func decompressZstd(stream []byte, limit int) (body []byte, err error) {
	if err := checkZstdFrame(stream, limit); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil { // a library bug must not stop the node
			body, err = nil, fmt.Errorf("%w: %w: %v", ErrBadBundle, errZstdDecode, r)
		}
	}()
	// The library needs room for the smallest window (1 KiB); the exact
	// cap is checked on the output.
	room := uint64(max(limit, zstd.MinWindowSize))
	dec, err := takeZstdDecoder(room)
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	returned := false // false while DecodeAll panics
	defer func() { putZstdDecoder(room, dec, returned && err == nil) }()
	body, err = decodeZstdWith(dec, stream, limit)
	returned = true
	return body, err
}

// decodeZstdWith decodes a checked frame with dec, to at most limit bytes.
func decodeZstdWith(dec *zstd.Decoder, stream []byte, limit int) ([]byte, error) {
	body, err := dec.DecodeAll(stream, nil)
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return nil, fmt.Errorf("%w: %w (%d bytes)", ErrBadBundle, ErrInflateCap, limit)
	case err != nil:
		return nil, fmt.Errorf("%w: %w: %v", ErrBadBundle, errZstdDecode, err)
	case len(body) > limit:
		return nil, fmt.Errorf("%w: %w (%d bytes)", ErrBadBundle, ErrInflateCap, limit)
	}
	return body, nil
}

// idleZstd is the decoder the last successful decompressZstd used, and
// the room it was built for: every block of a chain whose validator set
// and group keep their size decodes under the same cap, and building a
// decoder (its block decoder, then on the first frame its tables and
// history) costs more than many a frame's decoding. A caller takes it
// when it is idle and built for its room, or builds its own exactly as
// before, so concurrent callers (ProcessProposal beside a CLI or a test)
// never share one and never wait; the decoder of a call that failed, or
// panicked, is dropped, never kept. The options are the same either way,
// so what a frame decodes to, or why it is refused, does not depend on
// which decoder read it (TestReusedZstdDecoderDecodesAsAFreshOne).
var idleZstd struct {
	sync.Mutex
	room uint64
	dec  *zstd.Decoder
}

func takeZstdDecoder(room uint64) (*zstd.Decoder, error) {
	if idleZstd.TryLock() {
		dec := idleZstd.dec
		if dec != nil && idleZstd.room == room {
			idleZstd.dec = nil
			idleZstd.Unlock()
			return dec, nil
		}
		idleZstd.Unlock()
	}
	return newZstdDecoder(room)
}

// putZstdDecoder keeps dec as the idle decoder for room when its call
// succeeded (ok), closing the one it replaces; otherwise it closes dec.
func putZstdDecoder(room uint64, dec *zstd.Decoder, ok bool) {
	if ok {
		idleZstd.Lock()
		dec, idleZstd.dec, idleZstd.room = idleZstd.dec, dec, room
		idleZstd.Unlock()
	}
	if dec != nil {
		dec.Close()
	}
}

// newZstdDecoder is a decoder that refuses frames declaring more than room
// bytes, or a larger window, and decodes on the caller's goroutine.
func newZstdDecoder(room uint64) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(room), zstd.WithDecoderMaxWindow(room))
}

// zstdHeader is what checkZstdFrame reads of a frame header.
type zstdHeader struct {
	size        int    // header bytes, magic included
	window      uint64 // declared window (the content size when single-segment)
	contentSize uint64 // declared content size
	hasSize     bool
	checksum    bool
}

// readZstdHeader parses a frame header strictly (RFC 8878, 3.1.1.1).
func readZstdHeader(s []byte) (zstdHeader, error) {
	if len(s) < 5 {
		return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errNotZstd)
	}
	switch magic := binary.LittleEndian.Uint32(s); {
	case magic&zstdSkippableMask == zstdSkippableMagic:
		return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errZstdSkippable)
	case magic != zstdMagic:
		return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errNotZstd)
	}
	fhd := s[4]
	if fhd&0x18 != 0 { // bit 3 reserved, bit 4 unused: both zero in every encoder's output
		return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errZstdHeader)
	}
	if fhd&0x03 != 0 { // a Dictionary_ID field, even of ID 0
		return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errZstdDict)
	}
	single := fhd&0x20 != 0
	h := zstdHeader{size: 5, checksum: fhd&0x04 != 0}
	if !single {
		if len(s) < h.size+1 {
			return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errZstdTruncated)
		}
		wd := s[h.size]
		base := uint64(1) << (10 + wd>>3)
		h.window = base + base/8*uint64(wd&7)
		h.size++
	}
	fcsBytes := [4]int{0, 2, 4, 8}[fhd>>6]
	if single && fcsBytes == 0 {
		fcsBytes = 1
	}
	if fcsBytes > 0 {
		if len(s) < h.size+fcsBytes {
			return zstdHeader{}, fmt.Errorf("%w: %w", ErrBadBundle, errZstdTruncated)
		}
		var b [8]byte
		copy(b[:], s[h.size:h.size+fcsBytes])
		h.contentSize, h.hasSize = binary.LittleEndian.Uint64(b[:]), true
		if fcsBytes == 2 {
			h.contentSize += 256
		}
		h.size += fcsBytes
	}
	if single {
		h.window = max(h.contentSize, zstd.MinWindowSize)
	}
	return h, nil
}

// checkZstdFrame refuses, before anything is decoded, every stream but one
// zstd frame that ends exactly where the stream ends: skippable frames,
// dictionaries, reserved header bits, a declared content size above limit
// (ErrInflateCap) or window above max(limit, 1 KiB) (the format's smallest
// window), reserved block types, blocks over 128 KiB, raw and RLE blocks
// regenerating more than limit in all (ErrInflateCap), truncation, and any
// byte after the frame (a second frame included).
func checkZstdFrame(s []byte, limit int) error {
	h, err := readZstdHeader(s)
	if err != nil {
		return err
	}
	if h.hasSize && h.contentSize > uint64(max(limit, 0)) {
		return fmt.Errorf("%w: %w: declares %d bytes (cap %d)", ErrBadBundle, ErrInflateCap, h.contentSize, limit)
	}
	if h.window > uint64(max(limit, zstd.MinWindowSize)) {
		return fmt.Errorf("%w: %w: %d bytes (cap %d)", ErrBadBundle, errZstdWindow, h.window, limit)
	}
	pos, plain := h.size, 0 // plain: bytes the raw and RLE blocks regenerate
	for {
		if len(s)-pos < 3 {
			return fmt.Errorf("%w: %w", ErrBadBundle, errZstdTruncated)
		}
		bh := uint32(s[pos]) | uint32(s[pos+1])<<8 | uint32(s[pos+2])<<16
		pos += 3
		last, kind, size := bh&1 != 0, (bh>>1)&3, int(bh>>3)
		if size > zstdMaxBlock {
			return fmt.Errorf("%w: %w: %d bytes", ErrBadBundle, errZstdBlock, size)
		}
		payload := size
		switch kind {
		case 0: // raw
			plain += size
		case 1: // RLE: one byte, repeated size times
			plain, payload = plain+size, 1
		case 3:
			return fmt.Errorf("%w: %w: reserved block type", ErrBadBundle, errZstdBlock)
		}
		if plain > limit {
			return fmt.Errorf("%w: %w (%d bytes)", ErrBadBundle, ErrInflateCap, limit)
		}
		if len(s)-pos < payload {
			return fmt.Errorf("%w: %w", ErrBadBundle, errZstdTruncated)
		}
		pos += payload
		if last {
			break
		}
	}
	if h.checksum {
		if len(s)-pos < 4 {
			return fmt.Errorf("%w: %w", ErrBadBundle, errZstdTruncated)
		}
		pos += 4
	}
	if pos != len(s) {
		return fmt.Errorf("%w: %w: %d bytes", ErrBadBundle, errZstdTrailing, len(s)-pos)
	}
	return nil
}
