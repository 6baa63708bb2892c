package proposals

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A frame is a list of byte strings, each a minimal uvarint length then the
// bytes: the bundle's extensions (compressed: DEFLATE in HEALTH2, zstd in
// HEALTH3, zstd.go) and signatures use it.

// appendFrame appends the framing of items to dst.
func appendFrame(dst []byte, items [][]byte) []byte {
	for _, it := range items {
		dst = binary.AppendUvarint(dst, uint64(len(it)))
		dst = append(dst, it...)
	}
	return dst
}

// frameEntrySize bounds one framed entry of at most maxItem bytes.
func frameEntrySize(maxItem int) int { return binary.MaxVarintLen64 + maxItem }

// parseFrame reads exactly count entries of at most maxItem bytes each,
// refusing non-minimal lengths, truncation and trailing bytes. The items
// alias bz; an empty item is nil.
func parseFrame(bz []byte, count, maxItem int) ([][]byte, error) {
	if count < 0 || count > len(bz) {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrBadBundle, count, len(bz))
	}
	out := make([][]byte, count)
	for i := range out {
		l, k := binary.Uvarint(bz)
		if k <= 0 || (k > 1 && bz[k-1] == 0) {
			return nil, fmt.Errorf("%w: entry %d: bad length", ErrBadBundle, i)
		}
		if l > uint64(maxItem) || l > uint64(len(bz)-k) {
			return nil, fmt.Errorf("%w: entry %d: %d bytes, at most %d, %d left", ErrBadBundle, i, l, maxItem, len(bz)-k)
		}
		if l > 0 {
			out[i] = bz[k : k+int(l) : k+int(l)]
		}
		bz = bz[k+int(l):]
	}
	if len(bz) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last entry", ErrBadBundle, len(bz))
	}
	return out, nil
}

// countFrame is the number of entries of a well-formed frame, without
// bounding them (parseFrame does that).
func countFrame(bz []byte) (int, error) {
	n := 0
	for len(bz) > 0 {
		l, k := binary.Uvarint(bz)
		if k <= 0 || l > uint64(len(bz)-k) {
			return 0, fmt.Errorf("%w: frame entry %d: bad length", ErrBadBundle, n)
		}
		bz = bz[k+int(l):]
		n++
	}
	return n, nil
}

// deflate compresses body as one raw DEFLATE stream (HEALTH2). The level
// is the proposer's choice: validators check what the stream inflates to, never
// the stream itself, so a change of Go's compressor changes nothing.
func deflate(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var (
	errInflate = errors.New("extensions do not inflate")
	// ErrInflateCap: the extensions decompress (or declare that they do)
	// past what the votes of the last commit may hold. DEFLATE reading
	// stops one byte past the cap; zstd decoding at the first block past
	// it (zstd.go).
	ErrInflateCap = errors.New("extensions decompress past the cap")
)

// inflate decompresses one raw DEFLATE stream (HEALTH2) of at most limit
// bytes. It
// stops reading at limit+1 bytes (a decompression bomb costs no more than
// limit), and refuses a truncated stream and bytes after its final block.
func inflate(stream []byte, limit int) ([]byte, error) {
	src := bytes.NewReader(stream) // an io.ByteReader: flate reads no further than the stream's end
	r := flate.NewReader(src)
	defer func() { _ = r.Close() }()
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %v", ErrBadBundle, errInflate, err)
	}
	if len(body) > limit {
		return nil, fmt.Errorf("%w: %w (%d bytes)", ErrBadBundle, ErrInflateCap, limit)
	}
	if src.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the extensions' stream", ErrBadBundle, src.Len())
	}
	return body, nil
}
