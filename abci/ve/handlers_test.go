package ve

import (
	"context"
	"errors"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

type fixedGroup struct {
	epoch  uint64
	n      int
	err    error
	ref    []byte // the verdict reference: nil, none
	refErr error
}

func (g fixedGroup) VoteGroup(context.Context, int64) (uint64, int, error) {
	return g.epoch, g.n, g.err
}

func (g fixedGroup) VerdictReference(context.Context, int64, uint64, int) ([]byte, error) {
	return g.ref, g.refErr
}

type fakeMonitor struct {
	vs         []verdict.Verdict
	rates      []service.Report
	err        error
	serviceErr error
	panic      bool
}

func (m fakeMonitor) Service(epoch uint64, n int) ([]service.Report, error) {
	if m.panic {
		panic("monitor bug")
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.rates, m.serviceErr
}

func (m fakeMonitor) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	if m.panic {
		panic("monitor bug")
	}
	return m.vs, m.err
}

func extend(t *testing.T, h Handler) []byte {
	t.Helper()
	resp, err := h.ExtendVote()(sdk.Context{}, &abci.RequestExtendVote{Height: 10})
	if err != nil {
		t.Fatalf("ExtendVote returned an error: %v", err)
	}
	return resp.VoteExtension
}

func verify(h Handler, bz []byte) abci.ResponseVerifyVoteExtension_VerifyStatus {
	resp, err := h.VerifyVoteExtension()(sdk.Context{}, &abci.RequestVerifyVoteExtension{Height: 10, VoteExtension: bz})
	if err != nil {
		return -1
	}
	return resp.Status
}

func TestExtendVoteCarriesTheSnapshotAndVerifies(t *testing.T) {
	g := fixedGroup{epoch: 3, n: 3}
	h := NewHandler(g, fakeMonitor{vs: []verdict.Verdict{verdict.OK, verdict.Miss, verdict.Unknown}}, log.NewNopLogger())
	bz := extend(t, h)
	ext, err := Decode(bz, 3)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := verdict.Unpack(ext.Verdicts, 3)
	if err != nil || ext.EpochIndex != 3 || vs[0] != verdict.OK || vs[1] != verdict.Miss || vs[2] != verdict.Unknown {
		t.Fatalf("extension %+v %v %v", ext, vs, err)
	}
	if verify(h, bz) != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Fatal("own extension rejected")
	}
}

// The extension carries what the monitor saw of the members' service,
// relative to this validator's own median executor (service.Relative) and
// clamped to what an extension holds, and verifies.
func TestExtendVoteCarriesServiceReports(t *testing.T) {
	g := fixedGroup{epoch: 3, n: 5}
	ok := []verdict.Verdict{verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK}
	h := NewHandler(g, fakeMonitor{vs: ok, rates: []service.Report{6, 6, 40, service.Unknown, 12}}, log.NewNopLogger())
	bz := extend(t, h)
	ext, err := Decode(bz, 5)
	if err != nil {
		t.Fatal(err)
	}
	got, err := service.Decode(ext.Service, 5)
	want := []service.Report{0, 0, 34, service.Unknown, 0} // own median 6%: only executor 2 stands out by the floor
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("service %v (%v), want %v", got, err, want)
	}
	if verify(h, bz) != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Fatal("own extension rejected")
	}
}

// The verdicts go relative to the chain's reference: a validator that
// sees what the chain attested sends no verdict at all (its epoch and
// service reports only), and one that differs sends exactly where, which
// the reference turns back into what its monitor saw.
func TestExtendVoteSendsVerdictsRelativeToTheReference(t *testing.T) {
	const ok, miss, unknown = verdict.OK, verdict.Miss, verdict.Unknown
	attested := []verdict.Verdict{miss, ok, miss, unknown, ok, ok, miss, ok}
	ref, err := verdict.Pack(attested)
	if err != nil {
		t.Fatal(err)
	}
	g := fixedGroup{epoch: 3, n: len(attested), ref: ref}
	for name, seen := range map[string][]verdict.Verdict{
		"agrees with the chain":   attested,
		"one executor came back":  {miss, ok, ok, unknown, ok, ok, miss, ok},
		"sees everything missed":  {miss, miss, miss, miss, miss, miss, miss, miss},
		"sees everything unknown": {unknown, unknown, unknown, unknown, unknown, unknown, unknown, unknown},
		"sees everything serving": {ok, ok, ok, ok, ok, ok, ok, ok},
	} {
		h := NewHandler(g, fakeMonitor{vs: seen}, log.NewNopLogger())
		bz := extend(t, h)
		ext, err := Decode(bz, len(seen))
		if err != nil || verify(h, bz) != abci.ResponseVerifyVoteExtension_ACCEPT {
			t.Fatalf("%s: own extension %x refused (%v)", name, bz, err)
		}
		abs, err := verdict.Absolute(ext.Verdicts, ref, len(seen))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := verdict.Unpack(abs, len(seen))
		if !slices.Equal(got, seen) {
			t.Fatalf("%s: the extension stands for %v, the monitor saw %v", name, got, seen)
		}
		compact, _, err := NewChecker(context.Background(), g, 1).Verdicts(bz)
		if err != nil {
			t.Fatal(err)
		}
		if name == "agrees with the chain" && len(compact) != 0 {
			t.Fatalf("%s: verdicts %x sent, want none", name, compact)
		}
	}
}

// A monitor without service reports (canaries off, another group, a
// snapshot of the wrong size) costs the extension its service field
// only: the liveness verdicts still go out.
func TestExtendVoteAbstainsOnServiceAlone(t *testing.T) {
	g := fixedGroup{epoch: 3, n: 2}
	ok := []verdict.Verdict{verdict.OK, verdict.Miss}
	for name, m := range map[string]fakeMonitor{
		"canaries off":           {vs: ok, rates: []service.Report{service.Unknown, service.Unknown}},
		"service snapshot fails": {vs: ok, serviceErr: errors.New("epoch 2")},
		"service of wrong size":  {vs: ok, rates: []service.Report{0}},
	} {
		bz := extend(t, NewHandler(g, m, log.NewNopLogger()))
		ext, err := Decode(bz, 2)
		if err != nil || len(ext.Verdicts) == 0 || len(ext.Service) != 0 {
			t.Errorf("%s: extension %x (%+v, %v), want verdicts and no service", name, bz, ext, err)
		}
	}
}

func TestExtendVoteAbstainsOnAnyProblem(t *testing.T) {
	g := fixedGroup{epoch: 3, n: 2}
	for name, h := range map[string]Handler{
		"no monitor":               NewHandler(g, nil, log.NewNopLogger()),
		"monitor on another group": NewHandler(g, fakeMonitor{err: errors.New("epoch 2")}, log.NewNopLogger()),
		"monitor panics":           NewHandler(g, fakeMonitor{panic: true}, log.NewNopLogger()),
		"group unreadable":         NewHandler(fixedGroup{err: errors.New("no epoch")}, fakeMonitor{}, log.NewNopLogger()),
		"snapshot of wrong size":   NewHandler(g, fakeMonitor{vs: []verdict.Verdict{verdict.OK}}, log.NewNopLogger()),
		"unencodable verdict":      NewHandler(g, fakeMonitor{vs: []verdict.Verdict{verdict.OK, 3}}, log.NewNopLogger()),
		"reference unreadable": NewHandler(fixedGroup{epoch: 3, n: 2, refErr: errors.New("store")},
			fakeMonitor{vs: []verdict.Verdict{verdict.OK, verdict.OK}}, log.NewNopLogger()),
		"reference not a packing of the group": NewHandler(fixedGroup{epoch: 3, n: 2, ref: []byte{0xff}},
			fakeMonitor{vs: []verdict.Verdict{verdict.OK, verdict.OK}}, log.NewNopLogger()),
	} {
		if bz := extend(t, h); len(bz) != 0 {
			t.Errorf("%s: extension %x, want an empty one", name, bz)
		}
	}
}

// One named case per attack on VerifyVoteExtension.
func TestVerifyVoteExtensionRejectsAttacks(t *testing.T) {
	h := NewHandler(fixedGroup{epoch: 3, n: 5}, nil, log.NewNopLogger())
	good, _ := encodeVerdicts(t, 3, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK)
	wrongEpoch, _ := encodeVerdicts(t, 2, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK)
	nextEpoch, _ := encodeVerdicts(t, 4, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK)
	short, _ := encodeVerdicts(t, 3, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown)
	long, _ := encodeVerdicts(t, 3, make([]verdict.Verdict, 12)...)
	cases := []struct {
		name string
		bz   []byte
		want abci.ResponseVerifyVoteExtension_VerifyStatus
	}{
		{"valid", good, abci.ResponseVerifyVoteExtension_ACCEPT},
		{"empty abstains", nil, abci.ResponseVerifyVoteExtension_ACCEPT},
		{"forged for a past epoch", wrongEpoch, abci.ResponseVerifyVoteExtension_REJECT},
		{"for another epoch than the block attests about", nextEpoch, abci.ResponseVerifyVoteExtension_REJECT},
		{"too few verdicts", short, abci.ResponseVerifyVoteExtension_REJECT},
		{"too many verdicts", long, abci.ResponseVerifyVoteExtension_REJECT},
		{"oversized", make([]byte, 1<<20), abci.ResponseVerifyVoteExtension_REJECT},
		{"tampered: invalid verdict value", append(good[:len(good)-1:len(good)-1], good[len(good)-1]|0x03), abci.ResponseVerifyVoteExtension_REJECT},
		{"unknown field", append(append([]byte{}, good...), 0x18, 0x01), abci.ResponseVerifyVoteExtension_REJECT},
		{"garbage", []byte{0xde, 0xad, 0xbe, 0xef}, abci.ResponseVerifyVoteExtension_REJECT},
	}
	for _, c := range cases {
		if got := verify(h, c.bz); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	broken := NewHandler(fixedGroup{err: errors.New("store")}, nil, log.NewNopLogger())
	if got := verify(broken, good); got != abci.ResponseVerifyVoteExtension_REJECT {
		t.Errorf("unreadable group: %s", got)
	}
}

// FuzzVerifyVoteExtension: never panics or errors; whatever it accepts
// decodes to a valid extension for the group.
func FuzzVerifyVoteExtension(f *testing.F) {
	good, _ := encodeVerdicts(f, 3, verdict.OK, verdict.Miss)
	f.Add(good, 2)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, bz []byte, n int) {
		if n < 0 || n > 1<<14 {
			return
		}
		h := NewHandler(fixedGroup{epoch: 3, n: n}, nil, log.NewNopLogger())
		status := verify(h, bz)
		switch status {
		case abci.ResponseVerifyVoteExtension_ACCEPT:
			if len(bz) == 0 {
				return
			}
			e, err := Decode(bz, n)
			if err != nil || validate(e, 3, n) != nil {
				t.Fatalf("accepted %x: %v", bz, err)
			}
		case abci.ResponseVerifyVoteExtension_REJECT:
		default:
			t.Fatalf("status %v", status)
		}
	})
}
