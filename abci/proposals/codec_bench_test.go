package proposals

import (
	"bytes"
	"compress/flate"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// codecScenarios: what 150 validators see of the group, each with its
// service reports (the honest 3.25% baseline, serviceList).
var codecScenarios = []string{"all-ok", "1pct-identical", "30pct-correlated", "30pct-random"}

// extensionFrame is the extensions' frame a bundle compresses: 150
// validators' extensions in a scenario, and the cap they decode under.
func extensionFrame(tb testing.TB, validators, n int, scenario string) (body []byte, limit int) {
	tb.Helper()
	exts := make([][]byte, validators)
	for i := range exts {
		packed, err := verdict.Pack(scenarioList(scenario, n, i))
		if err != nil {
			tb.Fatal(err)
		}
		exts[i], err = ve.Encode(types.HealthVoteExtension{EpochIndex: 1000, Verdicts: packed, Service: serviceList(tb, n, i)}, n)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return appendFrame(nil, exts), validators * frameEntrySize(ve.MaxSize(n))
}

// codec is one way of compressing the extensions' frame: HEALTH2's DEFLATE
// at a level, or HEALTH3's zstd at a level.
type extCodec struct {
	name   string
	encode func(tb testing.TB, body []byte) []byte
	decode func(stream []byte, limit int) ([]byte, error)
}

// encoders builds one encoder per level, as compressZstd keeps one.
var encoders = func() func(zstd.EncoderLevel) (*zstd.Encoder, error) {
	built := map[zstd.EncoderLevel]*zstd.Encoder{}
	return func(level zstd.EncoderLevel) (*zstd.Encoder, error) {
		if enc, ok := built[level]; ok {
			return enc, nil
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
		built[level] = enc
		return enc, err
	}
}()

func zstdAt(level zstd.EncoderLevel) extCodec {
	return extCodec{
		name: "zstd-" + level.String(),
		encode: func(tb testing.TB, body []byte) []byte {
			enc, err := encoders(level)
			if err != nil {
				tb.Fatal(err)
			}
			return enc.EncodeAll(body, nil)
		},
		decode: decompressZstd,
	}
}

func deflateAt(level int, name string) extCodec {
	return extCodec{
		name:   name,
		encode: func(tb testing.TB, body []byte) []byte { return stream(tb, body, level) },
		decode: inflate,
	}
}

var codecs = []extCodec{
	deflateAt(flate.DefaultCompression, "deflate-6"), deflateAt(flate.BestCompression, "deflate-9"),
	zstdAt(zstd.SpeedFastest), zstdAt(zstd.SpeedDefault), zstdAt(zstd.SpeedBetterCompression), zstdAt(zstd.SpeedBestCompression),
}

// BenchmarkExtensionCodecs measures each codec on the extensions' frame of
// 150 validators at 1,000 and 10,000 executors: compressed bytes, decode
// time (what every validator pays in ProcessProposal, decoder set-up and
// cap checks included) and encode time (the proposer's, median of 5, one encoder kept per
// level as compressZstd keeps its own), and prints the
// table once:
//
//	go test -run '^$' -bench BenchmarkExtensionCodecs -benchtime 200x ./abci/proposals/
func BenchmarkExtensionCodecs(b *testing.B) {
	var table strings.Builder
	table.WriteString("\n| executors | scenario | frame | codec | compressed | decode µs | encode µs |\n|---|---|---|---|---|---|---|\n")
	for _, n := range []int{1000, 10000} {
		for _, sc := range codecScenarios {
			body, limit := extensionFrame(b, 150, n, sc)
			for _, c := range codecs {
				compressed := c.encode(b, body)
				encodes := make([]time.Duration, 5)
				for k := range encodes {
					start := time.Now()
					again := c.encode(b, body)
					encodes[k] = time.Since(start)
					if !bytes.Equal(again, compressed) {
						b.Fatalf("%s: not deterministic", c.name)
					}
				}
				slices.Sort(encodes)
				encode := encodes[len(encodes)/2]
				var perOp float64
				b.Run(fmt.Sprintf("executors=%d/%s/%s", n, sc, c.name), func(b *testing.B) {
					for b.Loop() {
						if _, err := c.decode(compressed, limit); err != nil {
							b.Fatal(err)
						}
					}
					perOp = float64(b.Elapsed().Microseconds()) / float64(b.N)
					b.ReportMetric(float64(len(compressed)), "bytes")
				})
				fmt.Fprintf(&table, "| %d | %s | %d | %s | %d | %.0f | %d |\n", n, sc, len(body), c.name, len(compressed), perOp, encode.Microseconds())
			}
		}
	}
	b.Log(table.String())
}
