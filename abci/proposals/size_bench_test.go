package proposals

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/inferenced/inferenced/abci/internal/testcommit"
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/x/inference/aggregate"
	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// sizeScenarios: what 150 validators see of the group.
var sizeScenarios = []string{"all-ok", "30pct-random", "30pct-correlated"}

// scenarioList is validator i's verdicts: all ok; the same 1% missed for
// every validator; its own random 30% missed (validators disagree, nothing
// is shared); or the same 30% missed for every validator.
func scenarioList(scenario string, n, i int) []verdict.Verdict {
	seed := uint64(i)
	if scenario == "30pct-correlated" {
		seed = 0
	}
	r := rand.New(rand.NewPCG(seed, 12))
	vs := make([]verdict.Verdict, n)
	for e := range vs {
		vs[e] = verdict.OK
		switch scenario {
		case "1pct-identical":
			if e%100 == 0 {
				vs[e] = verdict.Miss
			}
		case "30pct-random", "30pct-correlated":
			if r.IntN(10) < 3 {
				vs[e] = verdict.Miss
			}
		}
	}
	return vs
}

// serviceList is validator i's service reports: each executor's failed
// share of 16 canaries at the honest 3.25% baseline, as ExtendVote attests
// it (relative to its own median, under ve.ServiceFloor, clamped).
func serviceList(tb testing.TB, n, i int) []byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(uint64(i), 13))
	rates := make([]service.Report, n)
	for e := range rates {
		misses := 0
		for range 16 {
			if r.IntN(10_000) < 325 {
				misses++
			}
		}
		rates[e] = service.Rate(misses, 16)
	}
	bz, err := service.Attest(rates, ve.ServiceFloor)
	if err != nil {
		tb.Fatal(err)
	}
	return bz
}

// blockSizes is one block's sizes in a scenario, in today's layout and in
// the previous one (HEALTH1: packed verdicts, the whole extended commit).
type blockSizes struct {
	extBefore, extAfter       int // mean extension bytes per validator
	bundleBefore, bundleAfter int
	bundleUncompressed        int // this layout with the extensions framed, uncompressed
}

func measureSizes(tb testing.TB, validators, n int, scenario string) blockSizes {
	tb.Helper()
	const epoch = 1000
	vals := make([]testcommit.Validator, validators)
	for i := range vals {
		vals[i] = testcommit.New([]byte{byte(i), byte(i >> 8), 's'}, 100+int64(i)) // distinct powers: a realistic varint
	}
	var s blockSizes
	oldCommit := testcommit.Commit(tb, testChain, testHeight, testRound, vals, func(i int) []byte {
		packed, _ := verdict.Pack(scenarioList(scenario, n, i))
		bz, err := (&types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed}).Marshal()
		if err != nil {
			tb.Fatal(err)
		}
		s.extBefore += len(bz)
		return bz
	})
	votes := make([]aggregate.Vote, 0, validators)
	var reports []service.Vote
	var total uint64
	commit := testcommit.Commit(tb, testChain, testHeight, testRound, vals, func(i int) []byte {
		packed, _ := verdict.Pack(scenarioList(scenario, n, i))
		rates := serviceList(tb, n, i)
		bz, err := ve.Encode(types.HealthVoteExtension{EpochIndex: epoch, Verdicts: packed, Service: rates}, n)
		if err != nil {
			tb.Fatal(err)
		}
		s.extAfter += len(bz)
		votes = append(votes, aggregate.Vote{Power: 100, Verdicts: packed})
		reports = append(reports, service.Vote{Power: 100, Reports: rates})
		total += 100
		return bz
	})
	s.extBefore /= validators
	s.extAfter /= validators
	samples, err := aggregate.Packed(votes, n)
	if err != nil {
		tb.Fatal(err)
	}
	s.bundleBefore = oldBundleSize(tb, oldCommit, epoch, samples)
	medians, err := service.Encoded(reports, total, n)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := NewBundle(LayoutV3, commit, epoch, n, samples, medians)
	if err != nil {
		tb.Fatal(err)
	}
	bz, err := Encode(b)
	if err != nil {
		tb.Fatal(err)
	}
	s.bundleAfter = len(bz)
	raw := make([][]byte, len(commit.Votes))
	for i, v := range commit.Votes {
		raw[i] = v.VoteExtension
	}
	b.extensions = appendFrame(nil, raw)
	uncompressed, err := Encode(b)
	if err != nil {
		tb.Fatal(err)
	}
	s.bundleUncompressed = len(uncompressed)
	return s
}

// oldBundleSize is the size of the previous layout's bundle: the 8-byte
// prefix, then HealthBundle{1: the ExtendedCommitInfo, 2: epoch, 3: packed
// samples}.
func oldBundleSize(tb testing.TB, ec abci.ExtendedCommitInfo, epoch uint64, samples []byte) int {
	tb.Helper()
	commit, err := ec.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	field := func(l int) int { return 1 + uvarintSize(uint64(l)) + l }
	return 8 + field(len(commit)) + 1 + uvarintSize(epoch) + field(len(samples))
}

func uvarintSize(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// The goal of issue 12: at most 16 KB per block at 150 validators x 1,000
// executors, all ok. A size, not a time: asserted.
func TestBundleSizeGoal(t *testing.T) {
	s := measureSizes(t, 150, 1000, "all-ok")
	if s.bundleAfter > 16<<10 {
		t.Fatalf("150 validators x 1,000 executors all ok: %d bytes per block, goal 16,384", s.bundleAfter)
	}
	t.Logf("150 x 1,000 all ok: %d bytes per block (was %d)", s.bundleAfter, s.bundleBefore)
}

// BenchmarkBlockSizes reports extension and bundle bytes per block at 150
// validators, before (the HEALTH1 layout, computed) and after (HEALTH3),
// with and without the compressed frame, and prints the table once:
//
//	go test -run '^$' -bench BenchmarkBlockSizes -benchtime 1x ./abci/proposals/
func BenchmarkBlockSizes(b *testing.B) {
	var table strings.Builder
	table.WriteString("\n| executors | scenario | extension before | extension after | bundle before | bundle after (HEALTH3) | after, uncompressed |\n|---|---|---|---|---|---|---|\n")
	for _, n := range []int{1000, 10000} {
		for _, sc := range sizeScenarios {
			var s blockSizes
			b.Run(fmt.Sprintf("executors=%d/%s", n, sc), func(b *testing.B) {
				for b.Loop() {
					s = measureSizes(b, 150, n, sc)
				}
				b.ReportMetric(float64(s.extBefore), "ext-bytes-before")
				b.ReportMetric(float64(s.extAfter), "ext-bytes-after")
				b.ReportMetric(float64(s.bundleBefore), "bundle-bytes-before")
				b.ReportMetric(float64(s.bundleAfter), "bundle-bytes-after")
				b.ReportMetric(float64(s.bundleUncompressed), "bundle-bytes-uncompressed")
			})
			fmt.Fprintf(&table, "| %d | %s | %d | %d | %d | %d | %d |\n", n, sc, s.extBefore, s.extAfter, s.bundleBefore, s.bundleAfter, s.bundleUncompressed)
		}
	}
	b.Log(table.String())
}
