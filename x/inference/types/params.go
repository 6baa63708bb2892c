package types

import (
	"fmt"

	"cosmossdk.io/math"

	"github.com/inferenced/inferenced/x/inference/sprt"
)

// Default parameter values. The downtime ones are gonka's.
const (
	DefaultEpochLength      uint64 = 2000
	DefaultPocPhaseBlocks   uint64 = 20
	DefaultExpirationBlocks uint64 = 10
	DefaultMaxParticipants  uint64 = 10_000

	// MaxMaxParticipants caps max_participants itself.
	MaxMaxParticipants uint64 = 1_000_000

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
	return sprt.Validate(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
}
