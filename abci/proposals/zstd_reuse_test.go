package proposals

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/inferenced/inferenced/abci/ve"
)

// decompressFresh is decompressZstd as it was before the idle decoder: a
// decoder built for the call, then closed.
func decompressFresh(stream []byte, limit int) ([]byte, error) {
	if err := checkZstdFrame(stream, limit); err != nil {
		return nil, err
	}
	dec, err := newZstdDecoder(uint64(max(limit, zstd.MinWindowSize)))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return decodeZstdWith(dec, stream, limit)
}

// reuseStreams are frames of every kind the attack tests name, accepted
// and refused, each with the cap it is decoded under.
func reuseStreams(tb testing.TB) (streams [][]byte, limits []int) {
	body := appendFrame(nil, [][]byte{sampleCommit(tb).Votes[0].VoteExtension})
	limit := frameEntrySize(ve.MaxSize(2))
	crc := zstdWith(tb, body, zstd.WithEncoderCRC(true))
	badCRC := bytes.Clone(crc)
	badCRC[len(badCRC)-1] ^= 0xff
	good := zstdWith(tb, body, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	streams = [][]byte{
		good, crc, badCRC, zstdStream(tb, body, 1<<10),
		zstdStream(tb, make([]byte, limit+1), 1<<10), // a bomb that declares no size, one byte past the cap
		zstdStream(tb, make([]byte, 10<<20), 1<<10),  // and a large one
		zstdWith(tb, make([]byte, limit+1)),
		zframe(0x60, binary.LittleEndian.AppendUint16(nil, uint16(limit+1-256)), rawBlock(true, body)),
		singleSegment(5, zblock(true, 2, 2, []byte{5 << 3, 0})), // literals overrun the block
		singleSegment(byte(len(body)+1), rawBlock(true, body)),  // declares more than its content
		singleSegment(0, zblock(true, 2, 1, []byte{0})),         // a compressed block too small
		good[:len(good)-1], cat(good, []byte{0}), cat(skippable(8), good),
		zstdWith(tb, bytes.Repeat(body, 3)), zstdWith(tb, bytes.Repeat([]byte("abcdefgh"), 4000)),
	}
	for range streams {
		limits = append(limits, limit)
	}
	// The same frames under other caps: a decoder built for one room is
	// never used for another.
	for _, l := range []int{0, 100, 1 << 20} {
		streams = append(streams, good, zstdStream(tb, make([]byte, 1<<21), 1<<10))
		limits = append(limits, l, l)
	}
	return streams, limits
}

// TestReusedZstdDecoderDecodesAsAFreshOne: decoding through the idle
// decoder, in any order of good and bad frames and caps (a decoder that
// failed is dropped, one built for another cap is not used), gives exactly
// what a decoder built for the call gives, error text included; what it
// returned earlier is never written again by a later call (the output is
// the caller's, not the decoder's history); the idle decoder is taken
// again for the next call of the same cap; and it starts no goroutine.
func TestReusedZstdDecoderDecodesAsAFreshOne(t *testing.T) {
	streams, limits := reuseStreams(t)
	goroutines := runtime.NumGoroutine()
	var kept [][]byte
	var copies [][]byte
	for round := range 3 {
		for k := range streams {
			// Each frame in turn, then every one after a good frame of its cap.
			for _, s := range [][]byte{streams[k], streams[(k*7+round)%len(streams)]} {
				got, err := decompressZstd(s, limits[k])
				want, wantErr := decompressFresh(s, limits[k])
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
					t.Fatalf("stream %d, cap %d: %d bytes (%v), fresh decoder %d bytes (%v)", k, limits[k], len(got), err, len(want), wantErr)
				}
				if err == nil {
					kept, copies = append(kept, got), append(copies, bytes.Clone(got))
				}
			}
		}
	}
	for k := range kept {
		if !bytes.Equal(kept[k], copies[k]) {
			t.Fatalf("output %d was overwritten by a later call", k)
		}
	}
	if n := runtime.NumGoroutine(); n != goroutines {
		t.Fatalf("%d goroutines after decoding, %d before", n, goroutines)
	}
	// The idle decoder is reused for the same cap.
	if _, err := decompressZstd(streams[0], limits[0]); err != nil {
		t.Fatal(err)
	}
	room := uint64(max(limits[0], zstd.MinWindowSize))
	idle := idleZstd.dec
	dec, err := takeZstdDecoder(room)
	if err != nil || dec != idle || idle == nil {
		t.Fatalf("took %p (%v), the idle decoder is %p", dec, err, idle)
	}
	putZstdDecoder(room, dec, true)
}

// TestZstdDecodersAreNotShared: callers decoding at once (ProcessProposal
// beside a CLI or a test) each get their own decoder or the idle one,
// never one in use: every result is the fresh decoder's.
func TestZstdDecodersAreNotShared(t *testing.T) {
	streams, limits := reuseStreams(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				k = (k*5 + g) % len(streams)
				got, err := decompressZstd(streams[k], limits[k])
				want, wantErr := decompressFresh(streams[k], limits[k])
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("stream %d: %v, fresh %v", k, err, wantErr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// FuzzZstdReuseAgrees: any stream and cap decode through the idle decoder
// (after a good frame of the same cap, so that one is idle) exactly as
// through a decoder built for the call, and a good frame decodes the same
// after it (whatever the stream did to the decoder that read it).
func FuzzZstdReuseAgrees(f *testing.F) {
	streams, limits := reuseStreams(f)
	for k := range streams {
		f.Add(streams[k], limits[k])
	}
	good := streams[0]
	f.Fuzz(func(t *testing.T, stream []byte, limit int) {
		if limit < 0 || limit > 4<<20 {
			return
		}
		for _, s := range [][]byte{good, stream, good} {
			got, err := decompressZstd(s, limit)
			want, wantErr := decompressFresh(s, limit)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
				t.Fatalf("cap %d: %d bytes (%v), fresh decoder %d bytes (%v)", limit, len(got), err, len(want), wantErr)
			}
		}
	})
}

// BenchmarkZstdDecoder is the extensions' frame of 150 validators decoded
// with a decoder built for each call (before) and with the idle one (now).
func BenchmarkZstdDecoder(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, sc := range []string{"1pct-identical", "30pct-random"} {
			body, limit := extensionFrame(b, 150, n, sc)
			compressed, err := compressZstd(body)
			if err != nil {
				b.Fatal(err)
			}
			for _, impl := range []struct {
				name   string
				decode func([]byte, int) ([]byte, error)
			}{{"fresh", decompressFresh}, {"reused", decompressZstd}} {
				b.Run(fmt.Sprintf("executors=%d/%s/%s", n, sc, impl.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := impl.decode(compressed, limit); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
