// Package simulation is x/inference's part of the Cosmos SDK simulation
// (make test-sim): randomized genesis params, weighted operations for every
// message, valid most of the time and deliberately invalid some of the
// time, governance proposals changing the params, and the module's
// invariants checked while the simulation runs. It is test tooling, not
// consensus code: it draws from the *rand.Rand the harness seeds.
package simulation

import (
	"fmt"
	"math/rand"

	"cosmossdk.io/math"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// BondDenom is the denom every bond is in: the sim accounts hold only
// sdk.DefaultBondDenom, the staking denom.
const BondDenom = "stake"

// downtime are valid SPRT triples (good, bad, h) to draw from.
var downtime = [][3]string{{"0.1", "0.2", "4"}, {"0.05", "0.3", "2"}, {"0.01", "0.5", "1.5"}, {"0.2", "0.4", "6"}}

// between draws an integer in [lo, hi].
func between(r *rand.Rand, lo, hi uint64) uint64 {
	if hi <= lo {
		return lo
	}
	return lo + uint64(r.Int63n(int64(hi-lo+1)))
}

// rule draws a trip rule: threshold 1..100, 1 <= min <= window <= 64,
// in a row 1..64.
func rule(r *rand.Rand) (threshold, minSamples, window, inARow uint64) {
	window = between(r, 1, breaker.MaxWindow)
	return between(r, 1, 100), between(r, 1, window), window, between(r, 1, breaker.MaxWindow)
}

// RandomParams draws params that Validate accepts, sized for a short run:
// epochs of 8 to 40 blocks so that a run of a hundred blocks crosses
// several boundaries, small registries so that "registry full" happens,
// bonds far below the sim accounts' balances. Every field Validate checks
// is drawn across its whole valid range or a range inside it.
func RandomParams(r *rand.Rand) types.Params {
	p := types.DefaultParams()
	p.EpochLength = between(r, 8, 40)
	p.PocPhaseBlocks = between(r, 0, p.EpochLength/4)
	p.ExpirationBlocks = between(r, 1, min(12, p.EpochLength))
	d := downtime[r.Intn(len(downtime))]
	p.DowntimeGoodPercentage = math.LegacyMustNewDecFromStr(d[0])
	p.DowntimeBadPercentage = math.LegacyMustNewDecFromStr(d[1])
	p.DowntimeHThreshold = math.LegacyMustNewDecFromStr(d[2])
	p.MaxParticipants = between(r, 3, 40)

	p.HealthCbMissThresholdPct, p.HealthCbMinSamples, p.HealthCbWindowSamples, p.HealthCbConsecutiveMisses = rule(r)
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficMinSamples, p.HealthCbTrafficWindowSamples, p.HealthCbTrafficConsecutiveMisses = rule(r)
	p.HealthCbServiceMissThresholdPct, p.HealthCbServiceMinSamples, p.HealthCbServiceWindowSamples, p.HealthCbServiceConsecutiveMisses = rule(r)
	p.HealthCbServiceExcessPct = between(r, 1, 100)
	p.HealthCbMaxCooldownBlocks = between(r, 1, p.EpochLength-1)
	p.HealthCbInitialCooldownBlocks = between(r, 1, p.HealthCbMaxCooldownBlocks)
	p.HealthCbMaxExcludedWeightPct = between(r, 1, 100)
	p.HealthCbEnforce = r.Intn(5) != 0

	p.TransferAgentMinBond = sdk.NewCoin(BondDenom, math.NewIntFromUint64(between(r, 1, 1_000_000)))
	p.MaxTransferAgents = between(r, 2, 30)
	p.TransferAgentMissAllowance = between(r, 0, 20)
	p.TransferAgentMissAllowancePct = between(r, 0, 100)
	p.HealthCbTrafficMinAgents = between(r, 1, 4)
	if r.Intn(2) == 0 {
		// A sensitive traffic rule half of the time, so that the flaky
		// executors (flaky) are excluded, probed and restored within a
		// short run, with agents that keep their standing meanwhile.
		p.HealthCbTrafficWindowSamples = between(r, 4, 12)
		p.HealthCbTrafficMinSamples = between(r, 2, 4)
		p.HealthCbTrafficMissThresholdPct = between(r, 10, 40)
		p.HealthCbTrafficConsecutiveMisses = between(r, 2, 4)
		p.HealthCbTrafficMinAgents = between(r, 1, 2)
		p.TransferAgentMissAllowance = between(r, 20, 200)
	}

	perWeight := between(r, 1, 10_000)
	p.ParticipantBondPerWeight = math.NewIntFromUint64(perWeight)
	p.ParticipantMinBond = sdk.NewCoin(BondDenom, math.NewIntFromUint64(perWeight*between(r, 1, 100)))
	p.InferenceRetentionEpochs = between(r, 1, 3)
	if err := p.Validate(); err != nil {
		panic(fmt.Sprintf("simulation drew invalid x/inference params: %v", err)) // a bug of this generator
	}
	return p
}

// InvalidParams breaks one rule of Validate in valid params, and names it.
func InvalidParams(r *rand.Rand, p types.Params) (types.Params, string) {
	switch r.Intn(6) {
	case 0:
		p.PocPhaseBlocks = p.EpochLength
		return p, "poc_phase_blocks = epoch_length"
	case 1:
		p.EpochLength = 1
		return p, "epoch_length 1"
	case 2:
		p.HealthCbMinSamples = p.HealthCbWindowSamples + 1
		return p, "health_cb_min_samples above the window"
	case 3:
		p.HealthCbMaxCooldownBlocks = p.EpochLength
		return p, "health_cb_max_cooldown_blocks = epoch_length"
	case 4:
		p.TransferAgentMinBond = sdk.Coin{Denom: BondDenom, Amount: math.ZeroInt()}
		return p, "transfer_agent_min_bond zero"
	default:
		p.ParticipantMinBond = sdk.NewCoin(BondDenom, p.ParticipantBondPerWeight.SubRaw(1))
		return p, "participant_min_bond below participant_bond_per_weight"
	}
}
