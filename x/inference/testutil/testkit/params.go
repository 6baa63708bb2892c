package testkit

import (
	"cosmossdk.io/math"

	"github.com/inferenced/inferenced/x/inference/types"
)

// The breaker tests' cooldowns and trip rule (BreakerParams).
const (
	BreakerInitialCooldown = 5
	BreakerMaxCooldown     = 20
	// The trip rule of both sample kinds: at least 4 samples and over 25%
	// missed in the last 16, or 3 misses in a row (the seed's rule). Tests
	// count misses against it, so they set it themselves rather than follow
	// the chain's calibrated defaults.
	BreakerWindow, BreakerMinSamples, BreakerThresholdPct, BreakerConsecutive = 16, 4, 25, 3
)

// BreakerParams are the params the breaker's tests run under, in every
// package: no PoC phase, inferences expire after one block (a miss lands
// two blocks after its start), cooldowns 5 doubling up to 20, an SPRT
// threshold so high that only the breaker acts, the same trip rule for
// both sample kinds, one agent's word trusted (health_cb_traffic_min_agents
// 1) and its allowance out of the way, so the breaker's state machine is
// driven alone. Corroboration and standing have their own params
// (EvidenceParams).
func BreakerParams() types.Params {
	p := types.DefaultParams()
	p.EpochLength, p.PocPhaseBlocks, p.ExpirationBlocks = 200, 0, 1
	p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = BreakerInitialCooldown, BreakerMaxCooldown
	p.DowntimeHThreshold = math.LegacyMustNewDecFromStr("1000")
	p.HealthCbTrafficMinAgents = 1
	p.TransferAgentMissAllowance = types.MaxTransferAgentMissAllowance
	p.HealthCbWindowSamples, p.HealthCbMinSamples = BreakerWindow, BreakerMinSamples
	p.HealthCbMissThresholdPct, p.HealthCbConsecutiveMisses = BreakerThresholdPct, BreakerConsecutive
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = BreakerWindow, BreakerMinSamples
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = BreakerThresholdPct, BreakerConsecutive
	return p
}

// EvidenceParams are BreakerParams with the default corroboration rule (two
// agents) and the default miss allowance.
func EvidenceParams() types.Params {
	p := BreakerParams()
	p.HealthCbTrafficMinAgents = types.DefaultHealthCBTrafficMinAgents
	p.TransferAgentMissAllowance = types.DefaultTransferAgentMissAllowance
	return p
}
