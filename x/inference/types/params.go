package types

import (
	"fmt"

	"cosmossdk.io/math"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
	"github.com/inferenced/inferenced/x/inference/sprt"
)

// Default parameter values. The downtime ones are gonka's.
const (
	DefaultEpochLength      uint64 = 2000
	DefaultPocPhaseBlocks   uint64 = 20
	DefaultExpirationBlocks uint64 = 10
	DefaultMaxParticipants  uint64 = 10_000

	// Circuit-breaker defaults: the unprefixed health_cb_* trip rule (for
	// attested samples; threshold and min samples keep the seed's names and
	// values), the cooldowns (the seed's other two names), then the design's.
	DefaultHealthCBMissThresholdPct      uint64 = 25
	DefaultHealthCBMinSamples            uint64 = 4
	DefaultHealthCBInitialCooldownBlocks uint64 = 50
	DefaultHealthCBMaxCooldownBlocks     uint64 = 500
	DefaultHealthCBWindowSamples         uint64 = 16
	DefaultHealthCBConsecutiveMisses     uint64 = 3
	DefaultHealthCBMaxExcludedWeightPct  uint64 = 50
	DefaultHealthCBEnforce                      = true

	// The trip rule for traffic samples (health_cb_traffic_*): slower than
	// the attested one, since an honest executor's traffic misses are
	// independent noise at thousands of inferences an epoch.
	// The traffic trip rule: 7 corroborated misses of the last 24 traffic
	// outcomes (at least 12), or 8 in a row. Chosen by make sim-sweep
	// (docs/simulation.md, 16 honest agents, 2,000 executor-epochs of
	// ~5,000 inferences): the rule that keeps false exclusions under the 1%
	// budget at 5% honest misses and catches a 28%-miss executor soonest.
	// Counted misses come in corroborated pairs, so the rule is in effect
	// "4 pairs": 7 of 24 and 8 of 24 trip alike.
	//
	// 24 outcomes: 0.6% of honest executor-epochs falsely excluded at 5%
	// misses (0.1% at 3.25%), a 28% executor out after a median 42 of its
	// inferences. 7 of 32: 1.5% false for 45; 7 of 20: 0.3% false for 67.
	DefaultHealthCBTrafficWindowSamples uint64 = 24
	// Half a window: right after a state change 4 pairs in 12 outcomes
	// are needed before the rate can trip.
	DefaultHealthCBTrafficMinSamples uint64 = 12
	// 26%: 7 of 24 (misses*100 > 26*24). 21% (6 of 24, 3 pairs): 13.7%
	// falsely excluded at 5%.
	DefaultHealthCBTrafficMissThresholdPct uint64 = 26
	// 8 in a row (4 pairs): never the binding rule once the window holds
	// 12 outcomes; it re-excludes a still-dark executor soon after a
	// restore, before then.
	DefaultHealthCBTrafficConsecutiveMisses uint64 = 8

	// The trip rule for service samples (health_cb_service_*): one sample a
	// block per executor the canaries attest, a miss when its attested
	// failed share exceeds the peers' median by more than
	// health_cb_service_excess_pct points (an ok within half of it).
	// Samples of consecutive blocks read overlapping canary windows, so the
	// run of 4 mostly filters a single block's flaky reports. Excess 15
	// with the monitor's CUSUM-gated reports (windows of 16, alarm at 4,000
	// milli-nats): no honest executor-epoch of 1,000 out on service at
	// 3.25% or 5% misses with 3 of 10 validators lying, and the fastest
	// candidate of the frontier (docs/simulation.md, "Canaries"; the window
	// rule needed 20 and windows of 32 for the same).
	DefaultHealthCBServiceWindowSamples     uint64 = 8
	DefaultHealthCBServiceMinSamples        uint64 = 4
	DefaultHealthCBServiceMissThresholdPct  uint64 = 50
	DefaultHealthCBServiceConsecutiveMisses uint64 = 4
	DefaultHealthCBServiceExcessPct         uint64 = 15

	// MaxMaxParticipants caps max_participants itself. An epoch group is
	// never larger, so a health vote extension stays under 12.6 KB and the
	// health bundle of 300 validators' extensions under 4 MiB, the bundle
	// limit (abci/proposals TestWorstCaseBundleFits).
	MaxMaxParticipants uint64 = 50_000

	// Transfer-agent and traffic-evidence defaults (docs/architecture.md,
	// "Transfer agents"). An honest agent at gonka's 3.25% miss rate stays
	// far inside 10 + 20% of its finished inferences; an agent that never
	// forwards is stopped at its 11th miss.
	DefaultTransferAgentMinBondAmount    int64  = 1_000_000
	DefaultTransferAgentBondDenom               = "stake"
	DefaultMaxTransferAgents             uint64 = 10_000
	DefaultTransferAgentMissAllowance    uint64 = 10
	DefaultTransferAgentMissAllowancePct uint64 = 20
	DefaultHealthCBTrafficMinAgents      uint64 = 2

	// MaxTrafficMinAgents bounds health_cb_traffic_min_agents: a ledger holds
	// at most a window (64) of misses, and the rule compares agents pairwise.
	MaxTrafficMinAgents uint64 = 16
	// MaxTransferAgentMissAllowance keeps the allowance arithmetic far from
	// overflow.
	MaxTransferAgentMissAllowance uint64 = 1_000_000
	// MaxMaxTransferAgents caps max_transfer_agents itself.
	MaxMaxTransferAgents uint64 = 1_000_000

	// MaxEpochLength keeps heights computed from params far from int64 overflow.
	MaxEpochLength uint64 = 1_000_000_000

	// DefaultInferenceRetentionEpochs keeps a closed inference for two
	// epochs after the block that closed it: long enough for agents and
	// clients to read an outcome of the last epoch, short enough that the
	// store holds about 2 x epoch_length blocks of traffic. Measured by
	// TestStoredInferenceBytes: a closed inference with typical inputs (a
	// 36-byte UUID id, 64-hex prompt and response hashes, a 21-byte model
	// name) stores about 420 bytes (key and value 353, prune-index entry
	// 66), so at the default epoch_length of 2,000 blocks each inference
	// per block of steady traffic holds about 4,000 x 420 = 1.7 MB of
	// state (170 MB at 100 a block), where version 3 grew without bound.
	DefaultInferenceRetentionEpochs uint64 = 2
	// MaxInferenceRetentionEpochs bounds inference_retention_epochs so that
	// a prune height (end height + retention x epoch_length, at most 10^12
	// blocks past it with MaxEpochLength) stays far from int64 overflow.
	MaxInferenceRetentionEpochs uint64 = 1_000
)

// DefaultParams returns the parameters of a new chain.
func DefaultParams() Params {
	return Params{
		EpochLength:            DefaultEpochLength,
		PocPhaseBlocks:         DefaultPocPhaseBlocks,
		ExpirationBlocks:       DefaultExpirationBlocks,
		DowntimeGoodPercentage: math.LegacyMustNewDecFromStr("0.1"),
		DowntimeBadPercentage:  math.LegacyMustNewDecFromStr("0.2"),
		DowntimeHThreshold:     math.LegacyMustNewDecFromStr("4"),
		MaxParticipants:        DefaultMaxParticipants,

		HealthCbMissThresholdPct:      DefaultHealthCBMissThresholdPct,
		HealthCbMinSamples:            DefaultHealthCBMinSamples,
		HealthCbInitialCooldownBlocks: DefaultHealthCBInitialCooldownBlocks,
		HealthCbMaxCooldownBlocks:     DefaultHealthCBMaxCooldownBlocks,
		HealthCbWindowSamples:         DefaultHealthCBWindowSamples,
		HealthCbConsecutiveMisses:     DefaultHealthCBConsecutiveMisses,
		HealthCbMaxExcludedWeightPct:  DefaultHealthCBMaxExcludedWeightPct,
		HealthCbEnforce:               DefaultHealthCBEnforce,

		TransferAgentMinBond:          sdk.NewInt64Coin(DefaultTransferAgentBondDenom, DefaultTransferAgentMinBondAmount),
		MaxTransferAgents:             DefaultMaxTransferAgents,
		TransferAgentMissAllowance:    DefaultTransferAgentMissAllowance,
		TransferAgentMissAllowancePct: DefaultTransferAgentMissAllowancePct,
		HealthCbTrafficMinAgents:      DefaultHealthCBTrafficMinAgents,

		HealthCbTrafficWindowSamples:     DefaultHealthCBTrafficWindowSamples,
		HealthCbTrafficMinSamples:        DefaultHealthCBTrafficMinSamples,
		HealthCbTrafficMissThresholdPct:  DefaultHealthCBTrafficMissThresholdPct,
		HealthCbTrafficConsecutiveMisses: DefaultHealthCBTrafficConsecutiveMisses,

		ParticipantMinBond:       sdk.NewInt64Coin(DefaultParticipantBondDenom, DefaultParticipantMinBondAmount),
		ParticipantBondPerWeight: math.NewInt(DefaultParticipantBondPerWeight),
		InferenceRetentionEpochs: DefaultInferenceRetentionEpochs,

		HealthCbServiceWindowSamples:     DefaultHealthCBServiceWindowSamples,
		HealthCbServiceMinSamples:        DefaultHealthCBServiceMinSamples,
		HealthCbServiceMissThresholdPct:  DefaultHealthCBServiceMissThresholdPct,
		HealthCbServiceConsecutiveMisses: DefaultHealthCBServiceConsecutiveMisses,
		HealthCbServiceExcessPct:         DefaultHealthCBServiceExcessPct,
	}
}

// Validate checks every rule and names the parameter that breaks one.
func (p Params) Validate() error {
	if p.EpochLength < 2 || p.EpochLength > MaxEpochLength {
		return fmt.Errorf("epoch_length must be in [2, %d], got %d", MaxEpochLength, p.EpochLength)
	}
	if p.PocPhaseBlocks >= p.EpochLength {
		return fmt.Errorf("poc_phase_blocks (%d) must be < epoch_length (%d)", p.PocPhaseBlocks, p.EpochLength)
	}
	if p.ExpirationBlocks < 1 || p.ExpirationBlocks > p.EpochLength {
		return fmt.Errorf("expiration_blocks must be in [1, epoch_length=%d], got %d", p.EpochLength, p.ExpirationBlocks)
	}
	if p.MaxParticipants < 1 || p.MaxParticipants > MaxMaxParticipants {
		return fmt.Errorf("max_participants must be in [1, %d], got %d", MaxMaxParticipants, p.MaxParticipants)
	}
	if err := sprt.Validate(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold); err != nil {
		return err
	}
	if err := p.validateBreaker(); err != nil {
		return err
	}
	if err := p.ValidateParticipantBonds(); err != nil {
		return err
	}
	if p.InferenceRetentionEpochs < 1 || p.InferenceRetentionEpochs > MaxInferenceRetentionEpochs {
		// At least one epoch: an outcome stays readable after the block
		// that closed it, and nothing the breaker still holds (a pending
		// sample, a probe) can name a pruned inference.
		return fmt.Errorf("inference_retention_epochs must be in [1, %d], got %d", MaxInferenceRetentionEpochs, p.InferenceRetentionEpochs)
	}
	return p.validateAgents()
}

// RetentionBlocks is how many blocks after its close a closed inference is
// kept: inference_retention_epochs x epoch_length, at most 10^12 for
// validated params.
func (p Params) RetentionBlocks() int64 {
	return int64(min(p.InferenceRetentionEpochs, MaxInferenceRetentionEpochs) * min(p.EpochLength, MaxEpochLength))
}

// validateAgents checks the transfer-agent and traffic-evidence params.
func (p Params) validateAgents() error {
	bond := p.TransferAgentMinBond
	switch {
	case sdk.ValidateDenom(bond.Denom) != nil:
		return fmt.Errorf("transfer_agent_min_bond: invalid denom %q: %v", bond.Denom, sdk.ValidateDenom(bond.Denom))
	case bond.Amount.IsNil() || !bond.Amount.IsPositive():
		return fmt.Errorf("transfer_agent_min_bond must be positive, got %s", bond)
	case p.MaxTransferAgents < 1 || p.MaxTransferAgents > MaxMaxTransferAgents:
		return fmt.Errorf("max_transfer_agents must be in [1, %d], got %d", MaxMaxTransferAgents, p.MaxTransferAgents)
	case p.TransferAgentMissAllowance > MaxTransferAgentMissAllowance:
		return fmt.Errorf("transfer_agent_miss_allowance must be at most %d, got %d", MaxTransferAgentMissAllowance, p.TransferAgentMissAllowance)
	case p.TransferAgentMissAllowancePct > 100:
		return fmt.Errorf("transfer_agent_miss_allowance_pct must be in [0, 100], got %d", p.TransferAgentMissAllowancePct)
	case p.HealthCbTrafficMinAgents < 1 || p.HealthCbTrafficMinAgents > MaxTrafficMinAgents:
		return fmt.Errorf("health_cb_traffic_min_agents must be in [1, %d], got %d", MaxTrafficMinAgents, p.HealthCbTrafficMinAgents)
	}
	return nil
}

// MissAllowance is how many charged misses an agent that finished
// this many inferences this epoch may have before its starts are refused.
func (p Params) MissAllowance(finished uint64) uint64 {
	const maxFinished = uint64(1) << 40 // far above any epoch's traffic; keeps the product in range
	return p.TransferAgentMissAllowance + min(finished, maxFinished)*p.TransferAgentMissAllowancePct/100
}

// tripRule is one sample kind's four trip-rule params with their names, so
// both kinds are validated and converted by the same code.
type tripRule struct {
	threshold, minSamples, window, consecutive          uint64
	thresholdName, minName, windowName, consecutiveName string
}

// attestedRule is the unprefixed health_cb_* trip rule (miss threshold, min
// samples, window, consecutive misses): the rule for attested samples.
func (p Params) attestedRule() tripRule {
	return tripRule{
		threshold: p.HealthCbMissThresholdPct, minSamples: p.HealthCbMinSamples,
		window: p.HealthCbWindowSamples, consecutive: p.HealthCbConsecutiveMisses,
		thresholdName: "health_cb_miss_threshold_pct", minName: "health_cb_min_samples",
		windowName: "health_cb_window_samples", consecutiveName: "health_cb_consecutive_misses",
	}
}

// trafficRule is the rule for traffic samples.
func (p Params) trafficRule() tripRule {
	return tripRule{
		threshold: p.HealthCbTrafficMissThresholdPct, minSamples: p.HealthCbTrafficMinSamples,
		window: p.HealthCbTrafficWindowSamples, consecutive: p.HealthCbTrafficConsecutiveMisses,
		thresholdName: "health_cb_traffic_miss_threshold_pct", minName: "health_cb_traffic_min_samples",
		windowName: "health_cb_traffic_window_samples", consecutiveName: "health_cb_traffic_consecutive_misses",
	}
}

// serviceRule is the rule for service samples.
func (p Params) serviceRule() tripRule {
	return tripRule{
		threshold: p.HealthCbServiceMissThresholdPct, minSamples: p.HealthCbServiceMinSamples,
		window: p.HealthCbServiceWindowSamples, consecutive: p.HealthCbServiceConsecutiveMisses,
		thresholdName: "health_cb_service_miss_threshold_pct", minName: "health_cb_service_min_samples",
		windowName: "health_cb_service_window_samples", consecutiveName: "health_cb_service_consecutive_misses",
	}
}

// validate checks a trip rule, naming the param that breaks it: the
// threshold in 1..100, 1 <= min samples <= window <= breaker.MaxWindow, and
// the consecutive misses in 1..breaker.MaxWindow.
func (r tripRule) validate() error {
	switch {
	case r.threshold < 1 || r.threshold > 100:
		return fmt.Errorf("%s must be in [1, 100], got %d", r.thresholdName, r.threshold)
	case r.window < 1 || r.window > breaker.MaxWindow:
		return fmt.Errorf("%s must be in [1, %d], got %d", r.windowName, breaker.MaxWindow, r.window)
	case r.minSamples < 1 || r.minSamples > r.window:
		return fmt.Errorf("%s must be in [1, %s=%d], got %d", r.minName, r.windowName, r.window, r.minSamples)
	case r.consecutive < 1 || r.consecutive > breaker.MaxWindow:
		return fmt.Errorf("%s must be in [1, %d], got %d", r.consecutiveName, breaker.MaxWindow, r.consecutive)
	}
	return nil
}

// breaker converts a validated rule to the breaker's (every value is at
// most 100 or breaker.MaxWindow, so the conversion is exact).
func (r tripRule) breaker() breaker.TripRule {
	return breaker.TripRule{
		WindowSamples:     uint32(r.window),
		MinSamples:        uint32(r.minSamples),
		ThresholdPct:      uint32(r.threshold),
		ConsecutiveMisses: uint32(r.consecutive),
	}
}

// validateBreaker checks the circuit-breaker params, one rule per error.
func (p Params) validateBreaker() error {
	if err := p.attestedRule().validate(); err != nil {
		return err
	}
	if err := p.trafficRule().validate(); err != nil {
		return err
	}
	if err := p.serviceRule().validate(); err != nil {
		return err
	}
	switch {
	case p.HealthCbServiceExcessPct < 1 || p.HealthCbServiceExcessPct > 100:
		// 100: no rate can exceed the peers' by more, so service never trips.
		return fmt.Errorf("health_cb_service_excess_pct must be in [1, 100], got %d", p.HealthCbServiceExcessPct)
	case p.HealthCbInitialCooldownBlocks < 1:
		return fmt.Errorf("health_cb_initial_cooldown_blocks must be at least 1, got %d", p.HealthCbInitialCooldownBlocks)
	case p.HealthCbInitialCooldownBlocks > p.HealthCbMaxCooldownBlocks:
		return fmt.Errorf("health_cb_initial_cooldown_blocks (%d) must be <= health_cb_max_cooldown_blocks (%d)", p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks)
	case p.HealthCbMaxCooldownBlocks >= p.EpochLength:
		return fmt.Errorf("health_cb_max_cooldown_blocks (%d) must be < epoch_length (%d)", p.HealthCbMaxCooldownBlocks, p.EpochLength)
	case p.HealthCbMaxExcludedWeightPct < 1 || p.HealthCbMaxExcludedWeightPct > 100:
		return fmt.Errorf("health_cb_max_excluded_weight_pct must be in [1, 100], got %d", p.HealthCbMaxExcludedWeightPct)
	}
	return nil
}

// BreakerParams converts validated params to the breaker's: the
// health_cb_traffic_* rule for traffic samples, the unprefixed
// health_cb_* rule for attested ones, health_cb_service_* for service.
func (p Params) BreakerParams() breaker.Params {
	var bp breaker.Params
	bp.Rules[breaker.Traffic] = p.trafficRule().breaker()
	bp.Rules[breaker.Attested] = p.attestedRule().breaker()
	bp.Rules[breaker.Service] = p.serviceRule().breaker()
	bp.InitialCooldown = p.HealthCbInitialCooldownBlocks
	bp.MaxCooldown = p.HealthCbMaxCooldownBlocks
	return bp
}

// EvidenceParams converts validated params to the traffic-evidence rule's:
// the ledger remembers the breaker's traffic window.
func (p Params) EvidenceParams() evidence.Params {
	return evidence.Params{Window: uint32(p.HealthCbTrafficWindowSamples), MinAgents: uint32(p.HealthCbTrafficMinAgents)}
}
