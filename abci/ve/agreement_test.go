package ve

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log/v2"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// CometBFT v0.40 runs VerifyVoteExtension on a node's own non-empty
// extension right after ExtendVote, on the same committed state, and
// panics the node if it is refused. The tests here hold ExtendVote to
// never producing what VerifyVoteExtension refuses, on every path.

// monitorFunc is a monitor scripted per test: what a slow, stopped or
// refreshing monitor answers for the epoch and size it is asked about.
type monitorFunc struct {
	snapshot func(epoch uint64, n int) ([]verdict.Verdict, error)
	service  func(epoch uint64, n int) ([]service.Report, error)
}

func (m monitorFunc) Snapshot(epoch uint64, n int) ([]verdict.Verdict, error) {
	return m.snapshot(epoch, n)
}

func (m monitorFunc) Service(epoch uint64, n int) ([]service.Report, error) {
	return m.service(epoch, n)
}

// outcome is what ExtendVote is expected to send.
type outcome int

const (
	abstains       outcome = iota // empty
	attests                       // verdicts and service reports
	attestsNoServe                // verdicts, no service field (abstains on service alone)
)

// extendAndVerify runs ExtendVote and then, as CometBFT v0.40 does,
// VerifyVoteExtension on its output against the same group, and fails if
// either errs or the second refuses the first. It returns the extension.
func extendAndVerify(t *testing.T, name string, g fixedGroup, m Snapshotter) []byte {
	t.Helper()
	resp, err := NewHandler(g, m, log.NewNopLogger()).ExtendVote()(sdk.Context{}, &abci.RequestExtendVote{Height: 10})
	if err != nil || resp == nil {
		t.Fatalf("%s: ExtendVote returned %v, %v: CometBFT would fail the vote", name, resp, err)
	}
	bz := resp.VoteExtension
	if len(bz) == 0 {
		return bz // CometBFT does not verify an empty extension
	}
	if len(bz) > MaxSize(g.n) {
		t.Errorf("%s: extension of %d bytes, over MaxSize(%d) = %d", name, len(bz), g.n, MaxSize(g.n))
	}
	// The verifier is another handler on the same committed state; its
	// own monitor, if any, plays no part in verification.
	v, err := NewHandler(g, nil, log.NewNopLogger()).VerifyVoteExtension()(sdk.Context{}, &abci.RequestVerifyVoteExtension{Height: 10, VoteExtension: bz})
	if err != nil || v == nil {
		t.Fatalf("%s: VerifyVoteExtension returned %v, %v", name, v, err)
	}
	if v.Status != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Fatalf("%s: own extension %x refused: CometBFT v0.40 would panic the node", name, bz)
	}
	return bz
}

// outcomeOf says what an extension carries.
func outcomeOf(t *testing.T, bz []byte, n int) outcome {
	t.Helper()
	if len(bz) == 0 {
		return abstains
	}
	ext, err := Decode(bz, n)
	if err != nil {
		t.Fatalf("accepted extension %x does not decode: %v", bz, err)
	}
	if len(ext.Service) == 0 {
		return attestsNoServe
	}
	return attests
}

func vs(v ...verdict.Verdict) []verdict.Verdict { return v }

func rates(r ...service.Report) []service.Report { return r }

// Every path of ExtendVote, one named case each. Besides agreeing with
// VerifyVoteExtension, each case says what the extension must carry, so
// that abstaining by mistake fails too.
func TestExtendVoteNeverProducesWhatVerifyRefuses(t *testing.T) {
	const ok, miss, unknown = verdict.OK, verdict.Miss, verdict.Unknown
	g := fixedGroup{epoch: 3, n: 3}
	ref, _ := verdict.Pack(vs(miss, ok, unknown))
	fine := vs(ok, miss, unknown)
	serving := rates(0, 40, service.Unknown)
	boom := errors.New("boom")
	healthy := fakeMonitor{vs: fine, rates: serving}
	stale := func(old []verdict.Verdict) func(uint64, int) ([]verdict.Verdict, error) {
		return func(uint64, int) ([]verdict.Verdict, error) { return old, nil }
	}
	refuses := func(watching uint64) func(uint64, int) ([]verdict.Verdict, error) {
		return func(epoch uint64, n int) ([]verdict.Verdict, error) {
			if epoch != watching {
				return nil, fmt.Errorf("monitor watches epoch %d, not %d", watching, epoch)
			}
			return fine, nil
		}
	}
	serviceOf := func(r []service.Report, err error) func(uint64, int) ([]service.Report, error) {
		return func(uint64, int) ([]service.Report, error) { return r, err }
	}
	cases := []struct {
		name string
		g    fixedGroup
		m    Snapshotter
		want outcome
	}{
		{"monitor nil", g, nil, abstains},
		{"snapshot ok", g, healthy, attests},
		{"snapshot ok, all ok, no service", g, fakeMonitor{vs: vs(ok, ok, ok)}, attestsNoServe},
		{"snapshot error", g, fakeMonitor{err: boom}, abstains},
		{"snapshot too short", g, fakeMonitor{vs: vs(ok, ok), rates: serving}, abstains},
		{"snapshot too long", g, fakeMonitor{vs: vs(ok, ok, ok, ok), rates: serving}, abstains},
		{"snapshot empty", g, fakeMonitor{vs: []verdict.Verdict{}}, abstains},
		{"snapshot with a value that is no verdict", g, fakeMonitor{vs: vs(ok, 3, ok)}, abstains},
		{"monitor panics", g, fakeMonitor{panic: true}, abstains},
		{"monitor panics in its service reports only", g, monitorFunc{stale(fine), func(uint64, int) ([]service.Report, error) { panic("canary bug") }}, abstains},
		{"slow monitor: verdicts of its last refresh, same group", g, monitorFunc{stale(vs(unknown, unknown, ok)), serviceOf(serving, nil)}, attests},
		{"stale monitor: last refresh for the previous, smaller group", g, monitorFunc{stale(vs(ok, ok)), serviceOf(rates(0, 0), nil)}, abstains},
		{"stopped monitor: every verdict aged out to unknown", g, monitorFunc{stale(vs(unknown, unknown, unknown)), serviceOf(rates(service.Unknown, service.Unknown, service.Unknown), nil)}, attestsNoServe},
		{"mid-epoch change: monitor still on the previous epoch", g, monitorFunc{refuses(2), serviceOf(serving, nil)}, abstains},
		{"mid-epoch change: monitor already on the next epoch", g, monitorFunc{refuses(4), serviceOf(serving, nil)}, abstains},
		{"mid-epoch change: group refreshed between snapshot and service", g, monitorFunc{stale(fine), serviceOf(nil, errors.New("monitor watches epoch 4"))}, attestsNoServe},
		{"mid-epoch change: group grew between the group read and the snapshot", g, monitorFunc{stale(vs(ok, ok, ok, miss)), serviceOf(rates(0, 0, 0, 0), nil)}, abstains},
		{"mid-epoch change: same size, another epoch's verdicts (the chain's epoch is encoded)", g, monitorFunc{stale(vs(miss, miss, ok)), serviceOf(serving, nil)}, attests},
		{"service reports present", g, healthy, attests},
		{"service reports absent (canaries off)", g, fakeMonitor{vs: fine}, attestsNoServe},
		{"service reports all unknown", g, fakeMonitor{vs: fine, rates: rates(service.Unknown, service.Unknown, service.Unknown)}, attestsNoServe},
		{"service reports erroring", g, fakeMonitor{vs: fine, serviceErr: boom}, attestsNoServe},
		{"service reports too few", g, fakeMonitor{vs: fine, rates: rates(0, 50)}, attestsNoServe},
		{"service reports too many", g, fakeMonitor{vs: fine, rates: rates(0, 50, 0, 0)}, attestsNoServe},
		{"service reports that are no rate (over 100%) go unknown", g, fakeMonitor{vs: fine, rates: rates(0, 180, 101)}, attests},
		{"service reports none a rate", g, fakeMonitor{vs: fine, rates: rates(service.Unknown, 180, 101)}, attestsNoServe},
		{"service reports one rate, others no rate", g, fakeMonitor{vs: fine, rates: rates(90, 180, 0)}, attests},
		{"verdict reference present", fixedGroup{epoch: 3, n: 3, ref: ref}, healthy, attests},
		{"verdict reference present, monitor agrees with it", fixedGroup{epoch: 3, n: 3, ref: ref}, fakeMonitor{vs: vs(miss, ok, unknown)}, attestsNoServe},
		{"verdict reference absent", g, healthy, attests},
		{"verdict reference erroring", fixedGroup{epoch: 3, n: 3, refErr: boom}, healthy, abstains},
		{"verdict reference of another group size", fixedGroup{epoch: 3, n: 3, ref: []byte{0x15, 0x01}}, healthy, abstains},
		{"verdict reference not a packing", fixedGroup{epoch: 3, n: 3, ref: []byte{0xff}}, healthy, abstains},
		{"group read failing", fixedGroup{err: boom}, healthy, abstains},
		{"group read failing, monitor nil", fixedGroup{err: boom}, nil, abstains},
		{"epoch 0 (none yet)", fixedGroup{epoch: 0, n: 3}, healthy, abstains},
		{"group of 0", fixedGroup{epoch: 3, n: 0}, fakeMonitor{vs: []verdict.Verdict{}, rates: []service.Report{}}, attestsNoServe},
		{"group of 0, snapshot of 1", fixedGroup{epoch: 3, n: 0}, fakeMonitor{vs: vs(ok)}, abstains},
		{"negative group size", fixedGroup{epoch: 3, n: -1}, healthy, abstains},
		{"epoch at the varint's limit", fixedGroup{epoch: math.MaxUint64, n: 3}, healthy, attests},
	}
	for _, c := range cases {
		bz := extendAndVerify(t, c.name, c.g, c.m)
		if got := outcomeOf(t, bz, c.g.n); got != c.want {
			t.Errorf("%s: extension %x is %s, want %s", c.name, bz, got, c.want)
		}
	}
}

func (o outcome) String() string {
	return [...]string{"an abstention", "verdicts and service", "verdicts without service"}[o]
}

// Property: over random groups (sizes 0 to 50,000, the sizes where the
// encodings change length, epochs up to 2^64-1), verdicts, service
// reports and references, and random faults of the monitor and the
// chain's reads, ExtendVote's extension is empty or accepted; and when
// nothing is at fault it is not empty and says exactly what the monitor
// saw: the verdicts relative to the reference, the service reports as
// service.Attest makes them (none when the monitor has none).
func TestExtendVoteAgreesWithVerifyOnRandomInput(t *testing.T) {
	sizes := []int{0, 1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257, 258, 511, 512, 513,
		1000, 1023, 1024, 1025, 4095, 4096, 8191, 8192, 8193, 10_000, 16_383, 16_384, 50_000}
	epochs := []uint64{1, 2, 3, 127, 128, 1 << 40, math.MaxUint64 - 1, math.MaxUint64}
	rounds := 1500
	if testing.Short() {
		rounds = 200
	}
	for seed := range uint64(rounds) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		n := sizes[rng.IntN(len(sizes))]
		if rng.IntN(3) == 0 {
			n = rng.IntN(3000)
		}
		g := fixedGroup{epoch: epochs[rng.IntN(len(epochs))], n: n}
		m := fakeMonitor{vs: randomVerdicts(rng, n), rates: randomRates(rng, n)}
		faulty := false
		fault := func(p int) bool {
			if rng.IntN(p) == 0 {
				faulty = true
				return true
			}
			return false
		}
		switch {
		case rng.IntN(2) == 0: // no reference
		case fault(8):
			g.refErr = errors.New("store")
		case fault(8):
			g.ref = make([]byte, verdict.PackedLen(n)+1) // another group's
		default:
			g.ref, _ = verdict.Pack(randomVerdicts(rng, n))
		}
		var mon Snapshotter = m
		switch {
		case fault(40):
			mon = nil
		case fault(40):
			m.panic = true
			mon = m
		case fault(30):
			g.err = errors.New("no epoch")
		case fault(30):
			m.err = errors.New("another epoch")
			mon = m
		case fault(30):
			m.vs = randomVerdicts(rng, n+1+rng.IntN(3))
			mon = m
		case fault(30) && n > 0:
			m.vs[rng.IntN(n)] = 3 // no verdict
			mon = m
		}
		serviceFault := false
		switch rng.IntN(12) {
		case 0:
			m.serviceErr, serviceFault = errors.New("canaries"), true
		case 1:
			m.rates, serviceFault = randomRates(rng, n+1), true
		case 2:
			m.rates, serviceFault = nil, true
		}
		if mon != nil {
			mon = m
		}
		name := fmt.Sprintf("seed %d (n=%d epoch=%d)", seed, n, g.epoch)
		bz := extendAndVerify(t, name, g, mon)
		if faulty {
			continue
		}
		checkSaysWhatTheMonitorSaw(t, name, bz, g, m, serviceFault)
	}
}

// checkSaysWhatTheMonitorSaw checks an extension made without a fault:
// it is there, and it carries the monitor's verdicts and reports.
func checkSaysWhatTheMonitorSaw(t *testing.T, name string, bz []byte, g fixedGroup, m fakeMonitor, serviceFault bool) {
	t.Helper()
	if len(bz) == 0 {
		t.Fatalf("%s: abstained with nothing at fault", name)
	}
	ext, err := Decode(bz, g.n)
	if err != nil || ext.EpochIndex != g.epoch {
		t.Fatalf("%s: extension %+v (%v), want epoch %d", name, ext, err, g.epoch)
	}
	abs, err := verdict.Absolute(ext.Verdicts, g.ref, g.n)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := verdict.Pack(m.vs)
	if !slices.Equal(abs, want) {
		t.Fatalf("%s: the extension stands for verdicts %x, the monitor saw %x", name, abs, want)
	}
	var wantService []byte
	if !serviceFault {
		if wantService, err = service.Attest(m.rates, ServiceFloor); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(ext.Service, wantService) {
		t.Fatalf("%s: service %x, want %x", name, ext.Service, wantService)
	}
}

// randomVerdicts is n verdicts, mostly ok or mostly one kind or uniform,
// so that the compact form is sometimes sparse and sometimes the packing.
func randomVerdicts(rng *rand.Rand, n int) []verdict.Verdict {
	out := make([]verdict.Verdict, n)
	base := verdict.Verdict(rng.IntN(3))
	density := []int{0, 1, 5, 50, 100}[rng.IntN(5)] // percent of exceptions
	for i := range out {
		out[i] = base
		if rng.IntN(100) < density {
			out[i] = verdict.Verdict(rng.IntN(3))
		}
	}
	return out
}

// randomRates is n service reports: 0% with a few or many exceptions
// (rates, unknowns, and values that are no rate), or all unknown.
func randomRates(rng *rand.Rand, n int) []service.Report {
	out := make([]service.Report, n)
	if rng.IntN(8) == 0 {
		for i := range out {
			out[i] = service.Unknown
		}
		return out
	}
	density := []int{0, 1, 10, 60, 100}[rng.IntN(5)]
	for i := range out {
		if rng.IntN(100) >= density {
			continue
		}
		switch rng.IntN(10) {
		case 0:
			out[i] = service.Unknown
		case 1:
			out[i] = service.Report(101 + rng.IntN(154)) // no rate
		default:
			out[i] = service.Report(rng.IntN(int(service.MaxRate) + 1))
		}
	}
	return out
}

// A caller that writes into one abstention (a wrapping handler, the SDK)
// must not change the next: were the empty response shared, a later
// abstention would carry those bytes, which VerifyVoteExtension may refuse.
func TestAbstentionsAreNotShared(t *testing.T) {
	h := NewHandler(fixedGroup{epoch: 3, n: 2}, nil, log.NewNopLogger())
	first, err := h.ExtendVote()(sdk.Context{}, &abci.RequestExtendVote{Height: 10})
	if err != nil {
		t.Fatal(err)
	}
	first.VoteExtension = []byte{0xde, 0xad}
	for name, m := range map[string]Snapshotter{"no monitor": nil, "monitor panics": fakeMonitor{panic: true}} {
		bz := extendAndVerify(t, name, fixedGroup{epoch: 3, n: 2}, m)
		if len(bz) != 0 {
			t.Errorf("%s: abstention %x after a caller wrote into an earlier one", name, bz)
		}
	}
}
