package proposals

import (
	"context"
	"errors"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// switchAt is a chain's record of the layout switch: HEALTH3 from height
// when set.
type switchAt struct {
	height int64
	set    bool
	err    error
}

func (s switchAt) BundleV3Switch(context.Context) (int64, bool, error) { return s.height, s.set, s.err }

// v3From: blocks carry HEALTH3 from height on.
func v3From(height int64) switchAt { return switchAt{height: height, set: true} }

func TestLayoutAt(t *testing.T) {
	broken := errors.New("store unreadable")
	cases := []struct {
		name   string
		sw     switchAt
		height int64
		want   Layout
		err    error
	}{
		{"no switch height (a store before version 6)", switchAt{}, 1000, LayoutV2, nil},
		{"the block before the switch", v3From(100), 99, LayoutV2, nil},
		{"the switch height", v3From(100), 100, LayoutV3, nil},
		{"after the switch", v3From(100), 101, LayoutV3, nil},
		{"a new chain (from block 1)", v3From(1), 2, LayoutV3, nil},
		{"the record unreadable", switchAt{err: broken}, 100, 0, broken},
	}
	for _, c := range cases {
		got, err := LayoutAt(context.Background(), c.sw, c.height)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: %s (%v), want %s (%v)", c.name, got, err, c.want, c.err)
		}
	}
}

// TestProcessRejectsTheWrongLayoutForItsHeight: the layout switches by
// height, from the chain's record, and a proposer cannot choose: one named
// case per attack, each a bundle that would pass in the other layout (the
// proposer's own handler built it there), refused for its layout alone.
func TestProcessRejectsTheWrongLayoutForItsHeight(t *testing.T) {
	vals := validators()
	ec := healthCommit(t, vals)
	last := CommitInfoOf(ec)
	height := testHeight + 1
	// proposal is what an honest proposer whose chain switches at from
	// puts at tx[0] of the block at height.
	proposal := func(t *testing.T, sw switchAt) []byte {
		t.Helper()
		r := &recorder{}
		h := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2}, func(sdk.Context) KeyLookup { return keysOf(vals) }, sw, log.NewNopLogger())
		resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{Height: height, MaxTxBytes: 10_000, LocalLastCommit: ec})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Txs[0]
	}
	v2, v3 := proposal(t, switchAt{}), proposal(t, v3From(height))
	cases := []struct {
		name    string
		chain   switchAt // what the validators' state says
		tx      []byte
		wantErr error // nil: accepted
	}{
		{"proposer sends the old layout (HEALTH2) at the switch height", v3From(height), v2, errWrongLayout},
		{"proposer sends the old layout (HEALTH2) after the switch", v3From(height - 10), v2, errWrongLayout},
		{"proposer sends the new layout (HEALTH3) before the switch", v3From(height + 1), v3, errWrongLayout},
		{"proposer sends the new layout (HEALTH3) on a chain that has not switched", switchAt{}, v3, errWrongLayout},
		{"proposer sends the old empty bundle after the switch", v3From(height), emptyBundle(LayoutV2), errWrongLayout},
		{"proposer sends the new empty bundle before the switch", v3From(height + 1), emptyBundle(LayoutV3), errWrongLayout},
		{"validator cannot read the switch", switchAt{err: errors.New("store unreadable")}, v3, errors.New("store unreadable")},
		{"HEALTH2 before the switch", v3From(height + 1), v2, nil},
		{"HEALTH3 at the switch height", v3From(height), v3, nil},
		{"HEALTH3 on a new chain", v3From(1), v3, nil},
		{"HEALTH2 on a chain that has not switched", switchAt{}, v2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			h := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2}, func(sdk.Context) KeyLookup { return keysOf(vals) }, c.chain, log.NewNopLogger())
			req := &abci.RequestProcessProposal{Height: height, Txs: [][]byte{c.tx}, ProposedLastCommit: last}
			_, _, err := h.checkBundle(enabledCtx(2), req)
			switch {
			case c.wantErr == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case c.wantErr != nil && (err == nil || !(errors.Is(err, c.wantErr) || strings.Contains(err.Error(), c.wantErr.Error()))):
				t.Fatalf("err %v, want %v", err, c.wantErr)
			}
			want := abci.ResponseProcessProposal_ACCEPT
			if c.wantErr != nil {
				want = abci.ResponseProcessProposal_REJECT
			}
			resp, err := h.ProcessProposal()(enabledCtx(2), req)
			if err != nil || resp.Status != want {
				t.Fatalf("status %v (%v), want %s", resp, err, want)
			}
		})
	}
}

// PrepareProposal builds the layout in force at its height, and fails only
// when the state cannot say which (the SDK then proposes without a bundle,
// which every validator refuses: the round moves on).
func TestPrepareBuildsTheLayoutInForce(t *testing.T) {
	vals := validators()
	ec := healthCommit(t, vals)
	cases := []struct {
		name   string
		sw     switchAt
		height int64
		want   Layout
	}{
		{"before the switch", v3From(50), 49, LayoutV2},
		{"at the switch", v3From(50), 50, LayoutV3},
		{"no switch height", switchAt{}, 50, LayoutV2},
	}
	for _, c := range cases {
		r := &recorder{}
		h := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2}, func(sdk.Context) KeyLookup { return keysOf(vals) }, c.sw, log.NewNopLogger())
		resp, err := h.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{Height: c.height, MaxTxBytes: 10_000, LocalLastCommit: ec})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, found, err := Find(resp.Txs)
		if !found || err != nil || b.Layout != c.want {
			t.Errorf("%s: bundle %s (found %v, %v), want %s", c.name, b.Layout, found, err, c.want)
		}
	}
	r := &recorder{}
	broken := NewHandler(r.prepare, r.process, group{epoch: 3, n: 2}, func(sdk.Context) KeyLookup { return keysOf(vals) },
		switchAt{err: errors.New("store unreadable")}, log.NewNopLogger())
	if _, err := broken.PrepareProposal()(enabledCtx(2), &abci.RequestPrepareProposal{Height: 50, MaxTxBytes: 10_000, LocalLastCommit: ec}); err == nil {
		t.Error("a proposal built without knowing its layout")
	}
}

// Readers of a decided block (the pre-blocker through Accepted, the
// health-bundle CLI through Find) take the bundle in the layout it carries:
// the block of the upgrade height, proposed by the previous release in
// HEALTH2 and finalized by this one, keeps its attestations.
func TestFindReadsEitherLayout(t *testing.T) {
	for _, layout := range layouts {
		bz, err := Encode(sampleBundle(t, layout))
		if err != nil {
			t.Fatal(err)
		}
		txs := [][]byte{bz, {0x0a, 0x01, 0x00}}
		b, found, err := Find(txs)
		if !found || err != nil || b.Layout != layout || b.Epoch != 2 {
			t.Errorf("%s: Find: %+v %v %v", layout, b, found, err)
		}
		b, found, reused, err := NewAccepted().Find(txs)
		if !found || reused || err != nil || b.Layout != layout || b.Epoch != 2 {
			t.Errorf("%s: Accepted.Find: %+v %v %v %v", layout, b, found, reused, err)
		}
		if _, err := b.Commit(CommitInfoOf(sampleCommit(t))); err != nil {
			t.Errorf("%s: votes: %v", layout, err)
		}
	}
}
