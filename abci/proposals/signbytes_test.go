package proposals

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cometbft/cometbft/libs/protoio"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
)

// cometSignBytes is CometBFT's own encoding of what a validator signs for
// its extension (what verifyVote marshalled before it wrote them by hand).
func cometSignBytes(tb testing.TB, chainID string, height int64, round int32, ext []byte) []byte {
	cve := cmtproto.CanonicalVoteExtension{Extension: ext, Height: height, Round: int64(round), ChainId: chainID}
	bz, err := protoio.MarshalDelimited(&cve)
	if err != nil {
		tb.Fatal(err)
	}
	return bz
}

// TestExtSignBytesAreCometBFTs: byte for byte CometBFT's encoding, for
// every field at its zero value or not (gogoproto omits zero fields),
// negative heights and rounds, the extremes, and extensions and chain ids
// whose lengths take one, two and three varint bytes; appended to a
// buffer that already holds bytes, those are kept. A validator whose
// signature verified before verifies now, and one that did not does not.
func TestExtSignBytesAreCometBFTs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	for _, ext := range [][]byte{nil, {}, {7}, bytes.Repeat([]byte{1}, 127), bytes.Repeat([]byte{2}, 128), bytes.Repeat([]byte{3}, 20000)} {
		for _, chainID := range []string{"", "c", "inferenced-1", string(bytes.Repeat([]byte{'x'}, 200))} {
			for _, height := range []int64{0, 1, -1, 1 << 40, math.MaxInt64, math.MinInt64} {
				for _, round := range []int32{0, 1, -1, math.MaxInt32, math.MinInt32, rng.Int32()} {
					want := cometSignBytes(t, chainID, height, round, ext)
					if got := appendExtSignBytes(nil, chainID, height, round, ext); !bytes.Equal(got, want) {
						t.Fatalf("chain %q, height %d, round %d, %d bytes: %x, want %x", chainID, height, round, len(ext), got, want)
					}
					prefix := []byte("kept")
					if got := appendExtSignBytes(prefix, chainID, height, round, ext); !bytes.Equal(got, append([]byte("kept"), want...)) {
						t.Fatalf("appending to a buffer changed its bytes")
					}
				}
			}
		}
	}
}

// FuzzExtSignBytes: any chain id, height, round and extension encode as
// CometBFT encodes them.
func FuzzExtSignBytes(f *testing.F) {
	f.Add("inferenced-1", int64(26), int32(0), []byte{8, 1, 18, 2})
	f.Add("", int64(0), int32(-3), []byte{})
	f.Fuzz(func(t *testing.T, chainID string, height int64, round int32, ext []byte) {
		if got, want := appendExtSignBytes(nil, chainID, height, round, ext), cometSignBytes(t, chainID, height, round, ext); !bytes.Equal(got, want) {
			t.Fatalf("%x, want %x", got, want)
		}
	})
}
