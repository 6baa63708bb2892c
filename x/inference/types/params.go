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

	// Circuit-breaker defaults: the seed's four, then the design's.
	DefaultHealthCBMissThresholdPct      uint64 = 25
	DefaultHealthCBMinSamples            uint64 = 4
	DefaultHealthCBInitialCooldownBlocks uint64 = 50
	DefaultHealthCBMaxCooldownBlocks     uint64 = 500
	DefaultHealthCBWindowSamples         uint64 = 16
	DefaultHealthCBConsecutiveMisses     uint64 = 3
	DefaultHealthCBMaxExcludedWeightPct  uint64 = 50
	DefaultHealthCBEnforce                      = true

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
	return p.validateAgents()
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

// validateBreaker checks the circuit-breaker params, one rule per error.
func (p Params) validateBreaker() error {
	switch {
	case p.HealthCbMissThresholdPct < 1 || p.HealthCbMissThresholdPct > 100:
		return fmt.Errorf("health_cb_miss_threshold_pct must be in [1, 100], got %d", p.HealthCbMissThresholdPct)
	case p.HealthCbWindowSamples < 1 || p.HealthCbWindowSamples > breaker.MaxWindow:
		return fmt.Errorf("health_cb_window_samples must be in [1, %d], got %d", breaker.MaxWindow, p.HealthCbWindowSamples)
	case p.HealthCbMinSamples < 1 || p.HealthCbMinSamples > p.HealthCbWindowSamples:
		return fmt.Errorf("health_cb_min_samples must be in [1, health_cb_window_samples=%d], got %d", p.HealthCbWindowSamples, p.HealthCbMinSamples)
	case p.HealthCbConsecutiveMisses < 1 || p.HealthCbConsecutiveMisses > breaker.MaxWindow:
		return fmt.Errorf("health_cb_consecutive_misses must be in [1, %d], got %d", breaker.MaxWindow, p.HealthCbConsecutiveMisses)
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

// BreakerParams converts validated params to the breaker's. Both sample
// kinds share one trip rule on chain today; the breaker keeps them apart so
// they can be calibrated separately.
func (p Params) BreakerParams() breaker.Params {
	rule := breaker.TripRule{
		WindowSamples:     uint32(p.HealthCbWindowSamples),
		MinSamples:        uint32(p.HealthCbMinSamples),
		ThresholdPct:      uint32(p.HealthCbMissThresholdPct),
		ConsecutiveMisses: uint32(p.HealthCbConsecutiveMisses),
	}
	var bp breaker.Params
	bp.Rules[breaker.Traffic] = rule
	bp.Rules[breaker.Attested] = rule
	bp.InitialCooldown = p.HealthCbInitialCooldownBlocks
	bp.MaxCooldown = p.HealthCbMaxCooldownBlocks
	return bp
}

// EvidenceParams converts validated params to the traffic-evidence rule's:
// the ledger remembers the breaker's traffic window.
func (p Params) EvidenceParams() evidence.Params {
	return evidence.Params{Window: uint32(p.HealthCbWindowSamples), MinAgents: uint32(p.HealthCbTrafficMinAgents)}
}
