package proposals

import (
	"bytes"
	"errors"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/std"
	"github.com/cosmos/cosmos-sdk/x/auth/tx"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// sampleBundle: one validator's signed extension for epoch 2, in round 1.
func sampleBundle(tb testing.TB) Bundle {
	tb.Helper()
	vote := testcommit.New([]byte{1}, 10).Vote(tb, testChain, testHeight, 1, []byte{0x08, 0x02, 0x12, 0x01, 0x09})
	return Bundle{
		Commit:  abci.ExtendedCommitInfo{Round: 1, Votes: []abci.ExtendedVoteInfo{vote}},
		Epoch:   2,
		Samples: []byte{0x09},
	}
}

func TestBundleRoundTrip(t *testing.T) {
	bz, err := Encode(sampleBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bz)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Encode(got)
	if err != nil || !bytes.Equal(again, bz) {
		t.Fatalf("round trip changed the bytes: %v", err)
	}
}

// Attack: the bundle bytes sent as a user transaction, or a user
// transaction passed off as the bundle. The app's transaction decoder
// refuses every prefixed input, and a transaction never carries the prefix.
func TestAttackBundleBytesNeverDecodeAsATransaction(t *testing.T) {
	reg := codectypes.NewInterfaceRegistry()
	std.RegisterInterfaces(reg)
	decode := tx.DefaultTxDecoder(codec.NewProtoCodec(reg))
	bz, err := Encode(sampleBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{bz, prefix, append(append([]byte{}, prefix...), 0x0a, 0x00)} {
		if _, err := decode(in); err == nil {
			t.Fatalf("the transaction decoder accepted %x", in)
		}
	}
	if _, err := Decode([]byte{0x0a, 0x02, 0x0a, 0x00}); !errors.Is(err, ErrNotBundle) {
		t.Fatalf("a transaction decoded as a bundle: %v", err)
	}
}

func TestDecodeRejectsAttacks(t *testing.T) {
	good, err := Encode(sampleBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		bz   []byte
		want error
	}{
		{"oversized", append(append([]byte{}, prefix...), make([]byte, MaxBundleSize)...), ErrBadBundle},
		{"missing prefix", good[len(prefix):], ErrNotBundle},
		{"truncated", good[:len(good)-1], ErrBadBundle},
		{"unknown field", append(append([]byte{}, good...), 0x20, 0x01), ErrNonCanonical},
		{"garbage commit", append(append([]byte{}, prefix...), 0x0a, 0x02, 0xff, 0xff), ErrBadBundle},
	}
	for _, c := range cases {
		if _, err := Decode(c.bz); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// FuzzDecodeBundle: never panics; whatever it accepts re-encodes to the
// same bytes.
func FuzzDecodeBundle(f *testing.F) {
	good, _ := Encode(sampleBundle(f))
	f.Add(good)
	f.Add(prefix)
	f.Fuzz(func(t *testing.T, bz []byte) {
		b, err := Decode(bz)
		if err != nil {
			return
		}
		again, err := Encode(b)
		if err != nil || !bytes.Equal(again, bz) {
			t.Fatalf("accepted %x, re-encodes to %x", bz, again)
		}
	})
}

// The largest bundle the chain's limits allow fits MaxBundleSize: 300
// validators (twice the design's 150, three times the staking default),
// every one with the largest valid extension for a group of
// max_participants' cap, a 64-byte signature and a 10-byte power varint.
// Attack covered: a registry grown to its cap must not make every honest
// bundle too large, which would switch attestation off.
func TestWorstCaseBundleFits(t *testing.T) {
	const validators = 300
	n := int(types.MaxMaxParticipants)
	ext := bytes.Repeat([]byte{0xaa}, ve.MaxSize(n))
	b := Bundle{Commit: abci.ExtendedCommitInfo{Round: 1 << 30}, Epoch: 1 << 62, Samples: bytes.Repeat([]byte{0xaa}, verdict.PackedLen(n))}
	for i := range validators {
		v := testcommit.New([]byte{byte(i), byte(i >> 8)}, 1<<62)
		b.Commit.Votes = append(b.Commit.Votes, v.Vote(t, testChain, 1<<62, b.Commit.Round, ext))
	}
	bz, err := Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(bz) > MaxBundleSize {
		t.Fatalf("worst-case bundle is %d bytes, limit %d", len(bz), MaxBundleSize)
	}
	if ve.MaxSize(n) > cmttypes.MaxVoteExtensionSize {
		t.Fatalf("largest extension %d bytes exceeds CometBFT's %d", ve.MaxSize(n), cmttypes.MaxVoteExtensionSize)
	}
	t.Logf("worst case: extension %d B, bundle %d B of %d", ve.MaxSize(n), len(bz), MaxBundleSize)
}
