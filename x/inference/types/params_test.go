package types_test

import (
	"testing"

	errorsmod "cosmossdk.io/errors"
	"cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/evidence"
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
		{"shortest epoch", func(p *types.Params) {
			p.EpochLength, p.PocPhaseBlocks, p.ExpirationBlocks = 2, 1, 2
			p.HealthCbInitialCooldownBlocks, p.HealthCbMaxCooldownBlocks = 1, 1
		}},
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
		{"breaker threshold 1 and 100", func(p *types.Params) { p.HealthCbMissThresholdPct = 100 }},
		{"breaker threshold 1", func(p *types.Params) { p.HealthCbMissThresholdPct = 1 }},
		{"one agent trusted, no allowance", func(p *types.Params) {
			p.HealthCbTrafficMinAgents, p.TransferAgentMissAllowance, p.TransferAgentMissAllowancePct = 1, 0, 0
		}},
		{"agent limits at their maxima", func(p *types.Params) {
			p.HealthCbTrafficMinAgents, p.MaxTransferAgents = types.MaxTrafficMinAgents, types.MaxMaxTransferAgents
			p.TransferAgentMissAllowance, p.TransferAgentMissAllowancePct = types.MaxTransferAgentMissAllowance, 100
		}},
		{"min samples = window = 64", func(p *types.Params) { p.HealthCbWindowSamples, p.HealthCbMinSamples = 64, 64 }},
		{"window and min samples 1", func(p *types.Params) { p.HealthCbWindowSamples, p.HealthCbMinSamples = 1, 1 }},
		{"consecutive 1 and 64", func(p *types.Params) { p.HealthCbConsecutiveMisses = 64 }},
		{"traffic threshold 100", func(p *types.Params) { p.HealthCbTrafficMissThresholdPct = 100 }},
		{"traffic threshold 1", func(p *types.Params) { p.HealthCbTrafficMissThresholdPct = 1 }},
		{"traffic min samples = window = 64", func(p *types.Params) {
			p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 64, 64
		}},
		{"traffic window and min samples 1", func(p *types.Params) {
			p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 1, 1
		}},
		{"traffic consecutive 1", func(p *types.Params) { p.HealthCbTrafficConsecutiveMisses = 1 }},
		{"traffic consecutive 64", func(p *types.Params) { p.HealthCbTrafficConsecutiveMisses = 64 }},
		{"traffic window shorter than the attested one", func(p *types.Params) {
			p.HealthCbWindowSamples, p.HealthCbMinSamples = 64, 64
			p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 2, 2
		}},
		{"initial = max cooldown", func(p *types.Params) { p.HealthCbInitialCooldownBlocks = p.HealthCbMaxCooldownBlocks }},
		{"max cooldown one below the epoch", func(p *types.Params) { p.HealthCbMaxCooldownBlocks = p.EpochLength - 1 }},
		{"cap 1% and shadow mode", func(p *types.Params) { p.HealthCbMaxExcludedWeightPct, p.HealthCbEnforce = 1, false }},
		{"cap 100%", func(p *types.Params) { p.HealthCbMaxExcludedWeightPct = 100 }},
		{"retention one epoch", func(p *types.Params) { p.InferenceRetentionEpochs = 1 }},
		{"longest retention of the longest epoch", func(p *types.Params) {
			p.InferenceRetentionEpochs, p.EpochLength = types.MaxInferenceRetentionEpochs, types.MaxEpochLength
		}},
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
		{"inference_retention_epochs 0", func(p *types.Params) { p.InferenceRetentionEpochs = 0 }, "inference_retention_epochs must be in [1, 1000]"},
		{"inference_retention_epochs over max", func(p *types.Params) {
			p.InferenceRetentionEpochs = types.MaxInferenceRetentionEpochs + 1
		}, "inference_retention_epochs"},
		{"inference_retention_epochs max uint64", func(p *types.Params) { p.InferenceRetentionEpochs = ^uint64(0) }, "inference_retention_epochs"},
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
		{"breaker threshold 0", func(p *types.Params) { p.HealthCbMissThresholdPct = 0 }, "health_cb_miss_threshold_pct"},
		{"breaker threshold 101", func(p *types.Params) { p.HealthCbMissThresholdPct = 101 }, "health_cb_miss_threshold_pct"},
		{"min samples 0", func(p *types.Params) { p.HealthCbMinSamples = 0 }, "health_cb_min_samples"},
		{"min samples above window", func(p *types.Params) { p.HealthCbMinSamples = p.HealthCbWindowSamples + 1 }, "health_cb_min_samples"},
		{"window 0", func(p *types.Params) { p.HealthCbWindowSamples = 0 }, "health_cb_window_samples"},
		{"window 65", func(p *types.Params) { p.HealthCbWindowSamples = 65 }, "health_cb_window_samples"},
		{"consecutive 0", func(p *types.Params) { p.HealthCbConsecutiveMisses = 0 }, "health_cb_consecutive_misses"},
		{"consecutive 65", func(p *types.Params) { p.HealthCbConsecutiveMisses = 65 }, "health_cb_consecutive_misses"},
		{"traffic threshold 0", func(p *types.Params) { p.HealthCbTrafficMissThresholdPct = 0 }, "health_cb_traffic_miss_threshold_pct"},
		{"traffic threshold 101", func(p *types.Params) { p.HealthCbTrafficMissThresholdPct = 101 }, "health_cb_traffic_miss_threshold_pct"},
		{"traffic min samples 0", func(p *types.Params) { p.HealthCbTrafficMinSamples = 0 }, "health_cb_traffic_min_samples"},
		{"traffic min samples above window", func(p *types.Params) {
			p.HealthCbTrafficMinSamples = p.HealthCbTrafficWindowSamples + 1
		}, "health_cb_traffic_min_samples"},
		// The attested window does not bound the traffic rule's min samples.
		{"traffic min samples above its window, within the attested one", func(p *types.Params) {
			p.HealthCbWindowSamples, p.HealthCbMinSamples = 64, 4
			p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 8, 9
		}, "health_cb_traffic_min_samples"},
		{"traffic window 0", func(p *types.Params) { p.HealthCbTrafficWindowSamples = 0 }, "health_cb_traffic_window_samples"},
		{"traffic window 65", func(p *types.Params) { p.HealthCbTrafficWindowSamples = 65 }, "health_cb_traffic_window_samples"},
		{"traffic window max uint64", func(p *types.Params) { p.HealthCbTrafficWindowSamples = ^uint64(0) }, "health_cb_traffic_window_samples"},
		{"traffic consecutive 0", func(p *types.Params) { p.HealthCbTrafficConsecutiveMisses = 0 }, "health_cb_traffic_consecutive_misses"},
		{"traffic consecutive 65", func(p *types.Params) { p.HealthCbTrafficConsecutiveMisses = 65 }, "health_cb_traffic_consecutive_misses"},
		// A version-2 store's params (no traffic rule) are refused until migrated.
		{"traffic rule unset", func(p *types.Params) {
			p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 0, 0
			p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = 0, 0
		}, "health_cb_traffic_"},
		{"service window 0", func(p *types.Params) { p.HealthCbServiceWindowSamples = 0 }, "health_cb_service_window_samples"},
		{"service window 65", func(p *types.Params) { p.HealthCbServiceWindowSamples = 65 }, "health_cb_service_window_samples"},
		{"service min samples above its window", func(p *types.Params) { p.HealthCbServiceMinSamples = p.HealthCbServiceWindowSamples + 1 }, "health_cb_service_min_samples"},
		{"service threshold 101", func(p *types.Params) { p.HealthCbServiceMissThresholdPct = 101 }, "health_cb_service_miss_threshold_pct"},
		{"service consecutive 0", func(p *types.Params) { p.HealthCbServiceConsecutiveMisses = 0 }, "health_cb_service_consecutive_misses"},
		{"service excess 0", func(p *types.Params) { p.HealthCbServiceExcessPct = 0 }, "health_cb_service_excess_pct"},
		{"service excess 101", func(p *types.Params) { p.HealthCbServiceExcessPct = 101 }, "health_cb_service_excess_pct"},
		// A version-4 store's params (no service rule) are refused until migrated.
		{"service rule unset", func(p *types.Params) {
			p.HealthCbServiceWindowSamples, p.HealthCbServiceMinSamples = 0, 0
			p.HealthCbServiceMissThresholdPct, p.HealthCbServiceConsecutiveMisses, p.HealthCbServiceExcessPct = 0, 0, 0
		}, "health_cb_service_"},
		{"initial cooldown 0", func(p *types.Params) { p.HealthCbInitialCooldownBlocks = 0 }, "health_cb_initial_cooldown_blocks"},
		{"initial above max", func(p *types.Params) { p.HealthCbInitialCooldownBlocks = p.HealthCbMaxCooldownBlocks + 1 }, "health_cb_initial_cooldown_blocks"},
		{"max cooldown equals epoch", func(p *types.Params) { p.HealthCbMaxCooldownBlocks = p.EpochLength }, "health_cb_max_cooldown_blocks"},
		{"max cooldown over epoch", func(p *types.Params) { p.EpochLength = 400 }, "health_cb_max_cooldown_blocks"},
		{"cap 0", func(p *types.Params) { p.HealthCbMaxExcludedWeightPct = 0 }, "health_cb_max_excluded_weight_pct"},
		{"cap 101", func(p *types.Params) { p.HealthCbMaxExcludedWeightPct = 101 }, "health_cb_max_excluded_weight_pct"},
		{"bond with a bad denom", func(p *types.Params) { p.TransferAgentMinBond.Denom = "1x" }, "transfer_agent_min_bond"},
		{"bond zero", func(p *types.Params) { p.TransferAgentMinBond.Amount = math.ZeroInt() }, "transfer_agent_min_bond"},
		{"bond unset", func(p *types.Params) { p.TransferAgentMinBond = sdk.Coin{Denom: "stake"} }, "transfer_agent_min_bond"},
		{"no agents allowed", func(p *types.Params) { p.MaxTransferAgents = 0 }, "max_transfer_agents"},
		{"agent registry over max", func(p *types.Params) { p.MaxTransferAgents = types.MaxMaxTransferAgents + 1 }, "max_transfer_agents"},
		{"allowance over max", func(p *types.Params) { p.TransferAgentMissAllowance = types.MaxTransferAgentMissAllowance + 1 }, "transfer_agent_miss_allowance"},
		{"allowance pct 101", func(p *types.Params) { p.TransferAgentMissAllowancePct = 101 }, "transfer_agent_miss_allowance_pct"},
		{"min agents 0", func(p *types.Params) { p.HealthCbTrafficMinAgents = 0 }, "health_cb_traffic_min_agents"},
		{"min agents over max", func(p *types.Params) { p.HealthCbTrafficMinAgents = types.MaxTrafficMinAgents + 1 }, "health_cb_traffic_min_agents"},
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
// can be built from and evaluated (the keeper does both in EndBlock), and
// the breaker accepts as its own params, each kind's rule as given.
func FuzzParamsValidate(f *testing.F) {
	d := types.DefaultParams() // the first seed is the defaults, whatever they are
	f.Add(d.EpochLength, d.PocPhaseBlocks, d.ExpirationBlocks, int64(100000000000000000), int64(200000000000000000), int64(4000000000000000000), uint64(6), uint64(0),
		d.HealthCbMissThresholdPct, d.HealthCbMinSamples, d.HealthCbWindowSamples, d.HealthCbConsecutiveMisses,
		d.HealthCbInitialCooldownBlocks, d.HealthCbMaxCooldownBlocks, d.HealthCbMaxExcludedWeightPct,
		d.HealthCbTrafficMissThresholdPct, d.HealthCbTrafficMinSamples, d.HealthCbTrafficWindowSamples, d.HealthCbTrafficConsecutiveMisses)
	f.Add(uint64(2), uint64(1), uint64(2), int64(1), int64(999999999999999999), int64(1), ^uint64(0), ^uint64(0),
		uint64(100), uint64(64), uint64(64), uint64(64), uint64(1), uint64(1), uint64(100),
		uint64(1), uint64(1), uint64(1), uint64(1))
	f.Add(uint64(0), uint64(0), uint64(0), int64(0), int64(0), int64(0), uint64(0), uint64(0),
		uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0),
		uint64(0), uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, epoch, poc, exp uint64, good, bad, h int64, misses, successes uint64,
		threshold, minSamples, window, consecutive, initial, maxCooldown, capPct uint64,
		tThreshold, tMinSamples, tWindow, tConsecutive uint64) {
		p := types.DefaultParams()
		p.EpochLength, p.PocPhaseBlocks, p.ExpirationBlocks = epoch, poc, exp
		p.DowntimeGoodPercentage = math.LegacyNewDecWithPrec(good, 18)
		p.DowntimeBadPercentage = math.LegacyNewDecWithPrec(bad, 18)
		p.DowntimeHThreshold = math.LegacyNewDecWithPrec(h, 18)
		p.HealthCbMissThresholdPct, p.HealthCbMinSamples, p.HealthCbWindowSamples = threshold, minSamples, window
		p.HealthCbConsecutiveMisses, p.HealthCbInitialCooldownBlocks = consecutive, initial
		p.HealthCbMaxCooldownBlocks, p.HealthCbMaxExcludedWeightPct = maxCooldown, capPct
		p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficMinSamples = tThreshold, tMinSamples
		p.HealthCbTrafficWindowSamples, p.HealthCbTrafficConsecutiveMisses = tWindow, tConsecutive
		if p.Validate() != nil {
			return
		}
		test, err := sprt.New(p.DowntimeGoodPercentage, p.DowntimeBadPercentage, p.DowntimeHThreshold)
		if err != nil {
			t.Fatalf("Validate accepted %v but sprt.New failed: %v", p, err)
		}
		_ = test.IsDown(misses, successes)
		bp := p.BreakerParams()
		if err := bp.Validate(); err != nil {
			t.Fatalf("Validate accepted %v but the breaker refuses it: %v", p, err)
		}
		d := types.DefaultParams()
		want := [3]breaker.TripRule{
			breaker.Traffic:  {WindowSamples: uint32(tWindow), MinSamples: uint32(tMinSamples), ThresholdPct: uint32(tThreshold), ConsecutiveMisses: uint32(tConsecutive)},
			breaker.Attested: {WindowSamples: uint32(window), MinSamples: uint32(minSamples), ThresholdPct: uint32(threshold), ConsecutiveMisses: uint32(consecutive)},
			breaker.Service: {WindowSamples: uint32(d.HealthCbServiceWindowSamples), MinSamples: uint32(d.HealthCbServiceMinSamples),
				ThresholdPct: uint32(d.HealthCbServiceMissThresholdPct), ConsecutiveMisses: uint32(d.HealthCbServiceConsecutiveMisses)},
		}
		if bp.Rules != want {
			t.Fatalf("BreakerParams of %v gave rules %v, want %v", p, bp.Rules, want)
		}
	})
}

// Each kind's trip rule comes from its own four params, and the evidence
// ledger remembers the traffic window. The values differ pairwise, so a
// param read for the wrong kind shows.
func TestBreakerParamsKeepTheKindsApart(t *testing.T) {
	p := types.DefaultParams()
	p.HealthCbWindowSamples, p.HealthCbMinSamples, p.HealthCbMissThresholdPct, p.HealthCbConsecutiveMisses = 10, 5, 30, 2
	p.HealthCbTrafficWindowSamples, p.HealthCbTrafficMinSamples = 40, 20
	p.HealthCbTrafficMissThresholdPct, p.HealthCbTrafficConsecutiveMisses = 35, 9
	p.HealthCbTrafficMinAgents = 3
	p.HealthCbServiceWindowSamples, p.HealthCbServiceMinSamples = 12, 6
	p.HealthCbServiceMissThresholdPct, p.HealthCbServiceConsecutiveMisses = 45, 5
	require.NoError(t, p.Validate())
	bp := p.BreakerParams()
	require.NoError(t, bp.Validate())
	require.Equal(t, breaker.TripRule{WindowSamples: 40, MinSamples: 20, ThresholdPct: 35, ConsecutiveMisses: 9}, bp.Rules[breaker.Traffic])
	require.Equal(t, breaker.TripRule{WindowSamples: 10, MinSamples: 5, ThresholdPct: 30, ConsecutiveMisses: 2}, bp.Rules[breaker.Attested])
	require.Equal(t, breaker.TripRule{WindowSamples: 12, MinSamples: 6, ThresholdPct: 45, ConsecutiveMisses: 5}, bp.Rules[breaker.Service])
	require.Equal(t, p.HealthCbInitialCooldownBlocks, bp.InitialCooldown)
	require.Equal(t, p.HealthCbMaxCooldownBlocks, bp.MaxCooldown)
	require.Equal(t, evidence.Params{Window: 40, MinAgents: 3}, p.EvidenceParams())
}

// A proposal with invalid params is refused at submission (gov calls
// ValidateBasic), naming the rule.
func TestMsgUpdateParamsValidateBasic(t *testing.T) {
	ok := types.MsgUpdateParams{Params: types.DefaultParams()}
	require.NoError(t, ok.ValidateBasic())
	bad := ok
	bad.Params.HealthCbMinSamples = 0
	err := bad.ValidateBasic()
	require.ErrorContains(t, err, "health_cb_min_samples")
}

// Found by make test-sim: ValidateBasic refused invalid params with a plain
// error, which a transaction or a proposal submission reports as codespace
// "undefined", code 1, not the module's documented ErrInvalidParams (the
// msg server's own refusal of the same params). Both now carry its code.
func TestInvalidParamsAreRefusedWithTheirCode(t *testing.T) {
	bad := types.MsgUpdateParams{Params: types.DefaultParams()}
	bad.Params.PocPhaseBlocks = bad.Params.EpochLength
	err := bad.ValidateBasic()
	require.ErrorIs(t, err, types.ErrInvalidParams)
	codespace, code, _ := errorsmod.ABCIInfo(err, false)
	require.Equal(t, types.ModuleName, codespace)
	require.Equal(t, types.ErrInvalidParams.ABCICode(), code)
	require.ErrorContains(t, err, "poc_phase_blocks")
}

// A prune height (end height + retention blocks) stays far from int64
// overflow for any validated params and any height genesis accepts.
func TestRetentionBlocksStayFarFromOverflow(t *testing.T) {
	p := types.DefaultParams()
	p.InferenceRetentionEpochs, p.EpochLength = types.MaxInferenceRetentionEpochs, types.MaxEpochLength
	p.HealthCbMaxCooldownBlocks = 1
	p.HealthCbInitialCooldownBlocks = 1
	require.NoError(t, p.Validate())
	require.Equal(t, int64(1_000_000_000_000), p.RetentionBlocks())
	require.Less(t, types.MaxHealthHeight, int64(1)<<62-p.RetentionBlocks(), "end height + retention fits with room to spare")
	require.Equal(t, int64(types.DefaultInferenceRetentionEpochs*types.DefaultEpochLength), types.DefaultParams().RetentionBlocks())
}
