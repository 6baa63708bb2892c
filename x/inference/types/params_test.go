package types_test

import (
	"testing"

	"cosmossdk.io/math"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/sprt"
	"github.com/inferenced/inferenced/x/inference/types"
)

func dec(s string) math.LegacyDec { return math.LegacyMustNewDecFromStr(s) }

func TestDefaultParamsAreValidAndGonkas(t *testing.T) {
	p := types.DefaultParams()
	require.NoError(t, p.Validate())
	require.Equal(t, "0.100000000000000000", p.DowntimeGoodPercentage.String())
	require.Equal(t, "0.200000000000000000", p.DowntimeBadPercentage.String())
	require.Equal(t, "4.000000000000000000", p.DowntimeHThreshold.String())
}

func TestParamsValidateAcceptsBoundaries(t *testing.T) {
	cases := []struct {
		name string
		edit func(*types.Params)
	}{
		{"shortest epoch", func(p *types.Params) { p.EpochLength, p.PocPhaseBlocks, p.ExpirationBlocks = 2, 1, 2 }},
		{"longest epoch", func(p *types.Params) { p.EpochLength = types.MaxEpochLength }},
		{"no PoC phase", func(p *types.Params) { p.PocPhaseBlocks = 0 }},
		{"PoC phase one block short of the epoch", func(p *types.Params) { p.PocPhaseBlocks = p.EpochLength - 1 }},
		{"expiration one block", func(p *types.Params) { p.ExpirationBlocks = 1 }},
		{"expiration a whole epoch", func(p *types.Params) { p.ExpirationBlocks = p.EpochLength }},
		{"extreme percentages", func(p *types.Params) {
			p.DowntimeGoodPercentage, p.DowntimeBadPercentage = dec("0.000000000000000001"), dec("0.999999999999999999")
		}},
		{"adjacent percentages", func(p *types.Params) {
			p.DowntimeGoodPercentage, p.DowntimeBadPercentage = dec("0.5"), dec("0.500000000000000001")
		}},
		{"tiny threshold", func(p *types.Params) { p.DowntimeHThreshold = dec("0.000000000000000001") }},
		{"huge threshold", func(p *types.Params) { p.DowntimeHThreshold = dec("1000000000000") }},
		{"one participant", func(p *types.Params) { p.MaxParticipants = 1 }},
		{"largest registry", func(p *types.Params) { p.MaxParticipants = types.MaxMaxParticipants }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := types.DefaultParams()
			tc.edit(&p)
			require.NoError(t, p.Validate())
			// Whatever Validate accepts, the keeper's SPRT must build from.
			_, err := sprt.New(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
			require.NoError(t, err)
		})
	}
}

func TestParamsValidateRejectsEveryRule(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(*types.Params)
		mention string
	}{
		{"epoch_length 0", func(p *types.Params) { p.EpochLength = 0 }, "epoch_length"},
		{"epoch_length 1", func(p *types.Params) { p.EpochLength = 1 }, "epoch_length"},
		{"epoch_length over max", func(p *types.Params) { p.EpochLength = types.MaxEpochLength + 1 }, "epoch_length"},
		{"epoch_length max uint64", func(p *types.Params) { p.EpochLength = ^uint64(0) }, "epoch_length"},
		{"poc_phase_blocks equals epoch_length", func(p *types.Params) { p.PocPhaseBlocks = p.EpochLength }, "poc_phase_blocks"},
		{"poc_phase_blocks over epoch_length", func(p *types.Params) { p.PocPhaseBlocks = ^uint64(0) }, "poc_phase_blocks"},
		{"expiration_blocks 0", func(p *types.Params) { p.ExpirationBlocks = 0 }, "expiration_blocks"},
		{"expiration_blocks over epoch_length", func(p *types.Params) { p.ExpirationBlocks = p.EpochLength + 1 }, "expiration_blocks"},
		{"max_participants 0", func(p *types.Params) { p.MaxParticipants = 0 }, "max_participants"},
		{"max_participants over cap", func(p *types.Params) { p.MaxParticipants = types.MaxMaxParticipants + 1 }, "max_participants"},
		{"good unset", func(p *types.Params) { p.DowntimeGoodPercentage = math.LegacyDec{} }, "must be set"},
		{"bad unset", func(p *types.Params) { p.DowntimeBadPercentage = math.LegacyDec{} }, "must be set"},
		{"h unset", func(p *types.Params) { p.DowntimeHThreshold = math.LegacyDec{} }, "must be set"},
		{"good 0", func(p *types.Params) { p.DowntimeGoodPercentage = dec("0") }, "downtime_good_percentage"},
		{"good negative", func(p *types.Params) { p.DowntimeGoodPercentage = dec("-0.1") }, "downtime_good_percentage"},
		{"bad equals good", func(p *types.Params) { p.DowntimeBadPercentage = dec("0.1") }, "downtime_bad_percentage"},
		{"bad below good", func(p *types.Params) { p.DowntimeBadPercentage = dec("0.05") }, "downtime_bad_percentage"},
		{"bad 1", func(p *types.Params) { p.DowntimeBadPercentage = dec("1") }, "downtime_bad_percentage"},
		{"bad over 1", func(p *types.Params) { p.DowntimeBadPercentage = dec("2") }, "downtime_bad_percentage"},
		{"good over 1 and bad above it", func(p *types.Params) {
			p.DowntimeGoodPercentage, p.DowntimeBadPercentage = dec("1.5"), dec("2")
		}, "downtime_bad_percentage"},
		{"h 0", func(p *types.Params) { p.DowntimeHThreshold = dec("0") }, "downtime_h_threshold"},
		{"h negative", func(p *types.Params) { p.DowntimeHThreshold = dec("-4") }, "downtime_h_threshold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := types.DefaultParams()
			tc.edit(&p)
			err := p.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.mention, "the error names the parameter")
		})
	}
}

// FuzzParamsValidate: Validate never panics, and what it accepts the SPRT
// can be built from and evaluated (the keeper does both in EndBlock).
func FuzzParamsValidate(f *testing.F) {
	f.Add(uint64(2000), uint64(20), uint64(10), int64(100000000000000000), int64(200000000000000000), int64(4000000000000000000), uint64(6), uint64(0))
	f.Add(uint64(2), uint64(1), uint64(2), int64(1), int64(999999999999999999), int64(1), ^uint64(0), ^uint64(0))
	f.Add(uint64(0), uint64(0), uint64(0), int64(0), int64(0), int64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, epoch, poc, exp uint64, good, bad, h int64, misses, successes uint64) {
		p := types.Params{
			EpochLength: epoch, PocPhaseBlocks: poc, ExpirationBlocks: exp,
			DowntimeGoodPercentage: math.LegacyNewDecWithPrec(good, 18),
			DowntimeBadPercentage:  math.LegacyNewDecWithPrec(bad, 18),
			DowntimeHThreshold:     math.LegacyNewDecWithPrec(h, 18),
		}
		if p.Validate() != nil {
			return
		}
		test, err := sprt.New(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
		if err != nil {
			t.Fatalf("Validate accepted %v but sprt.New failed: %v", p, err)
		}
		_ = test.IsDown(misses, successes)
	})
}
