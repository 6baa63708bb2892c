package proposals

import (
	"bytes"
	"compress/flate"
	"crypto/rand"
	"errors"
	"runtime"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/std"
	"github.com/cosmos/cosmos-sdk/x/auth/tx"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// sampleCommit: one validator's signed extension for epoch 2 (a group of
// two: ok, miss), in round 1.
func sampleCommit(tb testing.TB) abci.ExtendedCommitInfo {
	tb.Helper()
	vote := testcommit.New([]byte{1}, 10).Vote(tb, testChain, testHeight, 1, []byte{0x08, 0x02, 0x12, 0x01, 0x09})
	return abci.ExtendedCommitInfo{Round: 1, Votes: []abci.ExtendedVoteInfo{vote}}
}

func sampleBundle(tb testing.TB, layout Layout) Bundle {
	tb.Helper()
	b, err := NewBundle(layout, sampleCommit(tb), 2, 2, []byte{0x09}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// layouts are both layouts a block may carry.
var layouts = []Layout{LayoutV2, LayoutV3}

func TestBundleRoundTrip(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			bz, err := Encode(sampleBundle(t, layout))
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
			if got.Layout != layout || got.Epoch != 2 || got.Members != 2 || !bytes.Equal(got.Samples, []byte{0x09}) {
				t.Fatalf("decoded %+v", got)
			}
			ec := sampleCommit(t)
			rebuilt, err := got.Commit(CommitInfoOf(ec))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := ec.Marshal()
			if have, _ := rebuilt.Marshal(); !bytes.Equal(have, want) {
				t.Fatalf("rebuilt commit %+v, want %+v", rebuilt, ec)
			}
			votes, err := got.Votes()
			if err != nil || len(votes) != 1 || !bytes.Equal(votes[0].Signature, ec.Votes[0].ExtensionSignature) {
				t.Fatalf("votes %+v %v", votes, err)
			}
			prefix, _ := prefixOf(layout)
			empty, err := Decode(emptyBundle(layout))
			if err != nil || !isEmpty(empty) || empty.Layout != layout || !bytes.Equal(emptyBundle(layout), prefix) {
				t.Fatalf("empty bundle %+v %v", empty, err)
			}
			if votes, err := empty.Votes(); votes != nil || err != nil {
				t.Fatalf("the empty bundle's votes: %v %v", votes, err)
			}
		})
	}
	if _, err := Encode(Bundle{}); err == nil {
		t.Error("a bundle without a layout encoded")
	}
	if _, err := NewBundle(Layout(4), sampleCommit(t), 2, 2, []byte{0x09}, nil); err == nil {
		t.Error("a bundle of an unknown layout built")
	}
}

// Attack: the bundle bytes sent as a user transaction, or a user
// transaction passed off as the bundle. The app's transaction decoder
// refuses every prefixed input, and a transaction never carries the prefix.
func TestAttackBundleBytesNeverDecodeAsATransaction(t *testing.T) {
	reg := codectypes.NewInterfaceRegistry()
	std.RegisterInterfaces(reg)
	decode := tx.DefaultTxDecoder(codec.NewProtoCodec(reg))
	for _, layout := range layouts {
		bz, err := Encode(sampleBundle(t, layout))
		if err != nil {
			t.Fatal(err)
		}
		prefix, _ := prefixOf(layout)
		for _, in := range [][]byte{bz, prefix, append(append([]byte{}, prefix...), 0x0a, 0x00)} {
			if _, err := decode(in); err == nil {
				t.Fatalf("the transaction decoder accepted %x", in)
			}
		}
	}
	if _, err := Decode([]byte{0x0a, 0x02, 0x0a, 0x00}); !errors.Is(err, ErrNotBundle) {
		t.Fatalf("a transaction decoded as a bundle: %v", err)
	}
}

func TestDecodeRejectsAttacks(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) { decodeRejectsAttacks(t, layout) })
	}
}

func decodeRejectsAttacks(t *testing.T, layout Layout) {
	good, err := Encode(sampleBundle(t, layout))
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := prefixOf(layout)
	envelope := func(hb types.HealthBundle) []byte {
		body, err := hb.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return append(append([]byte{}, prefix...), body...)
	}
	cases := []struct {
		name string
		bz   []byte
		want error
	}{
		{"oversized", append(append([]byte{}, prefix...), make([]byte, MaxBundleSize)...), ErrBadBundle},
		{"missing prefix", good[len(prefix):], ErrNotBundle},
		{"HEALTH1's prefix", append([]byte("\xffHEALTH1"), good[len(prefix):]...), ErrNotBundle},
		{"a layout that does not exist (HEALTH4)", append([]byte("\xffHEALTH4"), good[len(prefix):]...), ErrNotBundle},
		{"truncated", good[:len(good)-1], ErrBadBundle},
		{"unknown field", append(append([]byte{}, good...), 0x40, 0x01), ErrNonCanonical},
		{"service rates that are not canonical (all unknown written out)", append(append([]byte{}, good...), 0x3a, 0x03, 0x00, 0x01, 0x01), ErrBadBundle},
		{"the removed extended_commit_info field", append(append([]byte{}, prefix...), 0x0a, 0x00), ErrNonCanonical},
		{"garbage", append(append([]byte{}, prefix...), 0x2a, 0x02, 0xff), ErrBadBundle},
		{"members beyond max_participants' cap", envelope(types.HealthBundle{EpochIndex: 1, Members: uint32(types.MaxMaxParticipants) + 1}), ErrBadBundle},
		{"samples longer than their packing", envelope(types.HealthBundle{EpochIndex: 1, Members: 2, Samples: []byte{0x05, 0x00}}), verdict.ErrOversized},
		{"samples: non-canonical choice (packed all ok)", envelope(types.HealthBundle{EpochIndex: 1, Members: 8, Samples: []byte{0x55, 0x55}}), verdict.ErrNonCanonical},
		{"samples: index out of range", envelope(types.HealthBundle{EpochIndex: 1, Members: 8, Samples: []byte{0x10}}), verdict.ErrSparse},
	}
	for _, c := range cases {
		if _, err := Decode(c.bz); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// stream deflates body at level (flate.NoCompression: stored blocks).
func stream(t testing.TB, body []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// One named case per attack on the votes a HEALTH2 bundle carries; each
// must be refused before anything is verified. (HEALTH3's zstd frame:
// TestZstdVotesRejectAttacks.)
func TestDeflateVotesRejectAttacks(t *testing.T) {
	good := sampleBundle(t, LayoutV2)
	ec := sampleCommit(t)
	last := CommitInfoOf(ec)
	ext := ec.Votes[0].VoteExtension
	sigs := good.signatures
	with := func(exts, sigs []byte) Bundle {
		b := good
		b.extensions, b.signatures = exts, sigs
		return b
	}
	frame := func(items ...[]byte) []byte { return appendFrame(nil, items) }
	limit := frameEntrySize(ve.MaxSize(2)) // what one vote may inflate to
	// The cap itself must refuse these, not a later parse of what was
	// inflated whole (which would cost the bomb's full size first).
	for _, c := range []struct {
		name string
		b    Bundle
	}{
		{"decompression bomb: inflates far past the cap", with(stream(t, make([]byte, 10<<20), flate.BestCompression), sigs)},
		{"inflates one byte past the cap", with(stream(t, make([]byte, limit+1), flate.BestSpeed), sigs)},
	} {
		if _, err := c.b.Commit(last); !errors.Is(err, ErrInflateCap) {
			t.Errorf("%s: %v, want %v", c.name, err, ErrInflateCap)
		}
	}
	cases := []struct {
		name string
		b    Bundle
	}{
		{"truncated stream", with(good.extensions[:len(good.extensions)-1], sigs)},
		{"trailing bytes after the stream", with(append(append([]byte{}, good.extensions...), 0x00), sigs)},
		{"not a DEFLATE stream", with([]byte{0xff, 0xff, 0xff}, sigs)},
		{"empty stream", with(nil, sigs)},
		{"extension longer than the largest valid one", with(stream(t, frame(make([]byte, ve.MaxSize(2)+1)), flate.BestSpeed), sigs)},
		{"one extension too many", with(stream(t, frame(ext, ext), flate.BestSpeed), sigs)},
		{"one extension too few", with(stream(t, nil, flate.BestSpeed), sigs)},
		{"trailing byte after the last extension", with(stream(t, append(frame(ext), 0x00), flate.BestSpeed), sigs)},
		{"non-minimal extension length", with(stream(t, append([]byte{0x85, 0x00}, ext...), flate.BestSpeed), sigs)},
		{"missing signature frame", with(good.extensions, nil)},
		{"signature longer than any CometBFT signs", with(good.extensions, frame(make([]byte, cmttypes.MaxSignatureSize+1)))},
		{"one signature too many", with(good.extensions, append(append([]byte{}, sigs...), 0x00))},
		{"truncated signature", with(good.extensions, sigs[:len(sigs)-1])},
	}
	for _, c := range cases {
		if _, err := c.b.Commit(last); !errors.Is(err, ErrBadBundle) {
			t.Errorf("%s: %v, want %v", c.name, err, ErrBadBundle)
		}
	}
	// The compressed bytes are the proposer's choice: stored blocks, any
	// level, inflate to the same votes and are accepted alike.
	for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.BestCompression, flate.HuffmanOnly} {
		b := with(stream(t, frame(ext), level), sigs)
		if _, err := b.Commit(last); err != nil {
			t.Errorf("level %d: %v", level, err)
		}
	}
	tooMany := with(good.extensions, bytes.Repeat([]byte{0x00}, maxVotes+1))
	if _, err := tooMany.Votes(); !errors.Is(err, ErrBadBundle) {
		t.Errorf("more votes than any commit holds: %v", err)
	}
}

// FuzzDecodeBundle: never panics; whatever it accepts re-encodes to the
// same bytes, and decompressing its votes never panics either.
func FuzzDecodeBundle(f *testing.F) {
	for _, layout := range layouts {
		good, _ := Encode(sampleBundle(f, layout))
		f.Add(good)
		f.Add(emptyBundle(layout))
	}
	f.Fuzz(func(t *testing.T, bz []byte) {
		b, err := Decode(bz)
		if err != nil {
			return
		}
		again, err := Encode(b)
		if err != nil || !bytes.Equal(again, bz) {
			t.Fatalf("accepted %x, re-encodes to %x", bz, again)
		}
		_, _ = b.Votes()
	})
}

// FuzzBundleVotes: any extensions stream (DEFLATE or zstd, by layout) and
// signature frame, for any number of votes and group size: never panics,
// never decompresses past the cap, and what it accepts frames back to the
// same body.
func FuzzBundleVotes(f *testing.F) {
	for _, layout := range layouts {
		sample := sampleBundle(f, layout)
		f.Add(sample.extensions, sample.signatures, 1, 2, layout == LayoutV3)
	}
	f.Add(stream(f, make([]byte, 1<<16), flate.BestCompression), []byte{0}, 1, 2, false)
	f.Add([]byte{0x01, 0x00, 0x00, 0xff, 0xff}, []byte{}, 0, 0, false)
	f.Add(zstdStream(f, make([]byte, 1<<16), 1<<10), []byte{0}, 1, 2, true)
	f.Fuzz(func(t *testing.T, exts, sigs []byte, count, members int, v3 bool) {
		if count < 0 || count > 64 || members < 0 || members > 1000 {
			return
		}
		layout := LayoutV2
		if v3 {
			layout = LayoutV3
		}
		b := Bundle{Layout: layout, Epoch: 1, Members: members, extensions: exts, signatures: sigs}
		votes, err := b.votes(count)
		if err != nil {
			return
		}
		items := make([][]byte, len(votes))
		for i, v := range votes {
			if len(v.Extension) > ve.MaxSize(members) || len(v.Signature) > cmttypes.MaxSignatureSize {
				t.Fatalf("vote %d past its bound", i)
			}
			items[i] = v.Extension
		}
		body, err := b.decompress(count * frameEntrySize(ve.MaxSize(members)))
		if err != nil || !bytes.Equal(appendFrame(nil, items), body) {
			t.Fatalf("accepted votes do not frame back to the body: %v", err)
		}
	})
}

// The largest bundle the chain's limits allow fits MaxBundleSize: 300
// validators (twice the design's 150, three times the staking default),
// every one with the largest valid extension for a group of
// max_participants' cap, random so that nothing compresses, and a 64-byte
// signature. Attack covered: a registry grown to its cap must not make
// every honest bundle too large, which would switch attestation off.
func TestWorstCaseBundleFits(t *testing.T) {
	const validators = 300
	n := int(types.MaxMaxParticipants)
	ec := abci.ExtendedCommitInfo{Round: 1 << 30}
	for i := range validators {
		ext := make([]byte, ve.MaxSize(n))
		if _, err := rand.Read(ext); err != nil {
			t.Fatal(err)
		}
		v := testcommit.New([]byte{byte(i), byte(i >> 8)}, 1<<62)
		ec.Votes = append(ec.Votes, v.Vote(t, testChain, 1<<62, ec.Round, ext))
	}
	samples := bytes.Repeat([]byte{0xaa}, verdict.PackedLen(n))
	reports := make([]service.Report, n) // the most rates a list holds, spread out
	for i := 0; i < service.MaxExceptions; i++ {
		reports[i*(n/service.MaxExceptions)] = service.MaxRate
	}
	rates, err := service.Encode(reports)
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range layouts {
		b, err := NewBundle(layout, ec, 1<<62, n, samples, rates)
		if err != nil {
			t.Fatal(err)
		}
		bz, err := Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(bz) > MaxBundleSize {
			t.Fatalf("%s: worst-case bundle is %d bytes, limit %d", layout, len(bz), MaxBundleSize)
		}
		t.Logf("%s worst case: extension %d B, bundle %d B of %d", layout, ve.MaxSize(n), len(bz), MaxBundleSize)
	}
	if ve.MaxSize(n) > cmttypes.MaxVoteExtensionSize {
		t.Fatalf("largest extension %d bytes exceeds CometBFT's %d", ve.MaxSize(n), cmttypes.MaxVoteExtensionSize)
	}
}

// TestDeflateBombCostsNoMoreThanTheCap (attack: a proposer's
// decompression bomb makes every validator allocate what it inflates to):
// 256 MiB of zeros deflated to ~260 KB is refused after the cap,
// allocating about the cap. (HEALTH3: TestZstdBombCostsNoMoreThanTheCap.)
func TestDeflateBombCostsNoMoreThanTheCap(t *testing.T) {
	bomb := stream(t, make([]byte, 256<<20), flate.BestCompression)
	b := Bundle{Layout: LayoutV2, Epoch: 1, Members: 2, extensions: bomb, signatures: []byte{0}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := b.Commit(abci.CommitInfo{Votes: []abci.VoteInfo{{}}})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInflateCap) {
		t.Fatalf("bomb: %v, want %v", err, ErrInflateCap)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("the bomb allocated %d bytes; the cap is %d", alloc, frameEntrySize(ve.MaxSize(2)))
	}
}
