package keeper_test

import (
	"testing"

	"cosmossdk.io/math"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// registerWith funds addr(i) with fund and registers it at weight against bond.
func (f *fixture) registerWith(i byte, weight uint64, bond, fund sdk.Coin) error {
	if fund.IsPositive() {
		f.bank.Fund(addr(i), fund)
	}
	_, err := f.msg.RegisterParticipant(f.ctx, &types.MsgRegisterParticipant{
		Creator: bech(i), InferenceUrl: nodeURL(i), Models: []string{"m"}, Weight: weight, Bond: bond,
	})
	return err
}

func (f *fixture) updateWeight(i byte, weight uint64, addBond sdk.Coin) error {
	_, err := f.msg.UpdateParticipant(f.ctx, &types.MsgUpdateParticipant{
		Creator: bech(i), InferenceUrl: nodeURL(i), Models: []string{"m"}, Weight: weight, AddBond: addBond,
	})
	return err
}

func (f *fixture) deregister(i byte) (uint64, error) {
	resp, err := f.msg.DeregisterParticipant(f.ctx, &types.MsgDeregisterParticipant{Creator: bech(i)})
	if err != nil {
		return 0, err
	}
	return resp.ReleaseEpoch, nil
}

func (f *fixture) isParticipant(i byte) bool {
	f.t.Helper()
	has, err := f.k.Participants.Has(f.ctx, addr(i))
	require.NoError(f.t, err)
	return has
}

func (f *fixture) participantCount() uint64 {
	f.t.Helper()
	n, err := f.k.ParticipantCount.Get(f.ctx)
	require.NoError(f.t, err)
	return n
}

// perWeight is the test params' price of one weight unit (10,000stake).
func perWeight(units int64) sdk.Coin {
	return stake(units * testParams().ParticipantBondPerWeight.Int64())
}

func TestRegisterParticipantNeedsABondThatBacksItsWeight(t *testing.T) {
	minP := testParams().ParticipantMinBond
	cases := []struct {
		name    string
		weight  uint64
		bond    sdk.Coin
		fund    sdk.Coin
		wantErr error
		mention string
	}{
		{"minimum bond at its backed weight", 100, minP, minP, nil, ""},
		{"minimum bond below its backed weight", 1, minP, minP, nil, ""},
		{"larger bond, larger weight", 250, perWeight(250), perWeight(250), nil, ""},
		{"registry fill: bond one below the minimum", 1, minP.SubAmount(math.OneInt()), minP, types.ErrInvalidParticipantBond, "need at least 1000000stake (participant_min_bond)"},
		{"registry fill: no bond", 1, sdk.Coin{}, minP, types.ErrInvalidParticipantBond, "participant_min_bond"},
		{"attack: bond in a worthless denom", 1, sdk.NewInt64Coin("junk", 5_000_000), sdk.NewInt64Coin("junk", 5_000_000), types.ErrInvalidParticipantBond, "in stake"},
		{"lottery capture by self-declared weight: one unit over the bond", 101, minP, minP, types.ErrInvalidParticipantBond, "weight 101 needs a bond of 1010000stake"},
		{"lottery capture by self-declared weight: the old 2^40", types.MaxParticipantWeight, minP, minP, types.ErrInvalidParticipantBond, "needs a bond"},
		{"attack: bond it does not have", 100, minP, stake(0), sdkerrors.ErrInsufficientFunds, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.block(1)
			before := f.held()
			err := f.registerWith(1, c.weight, c.bond, c.fund)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				require.ErrorContains(t, err, c.mention)
				require.False(t, f.isParticipant(1))
				require.Equal(t, before, f.held(), "a refused registration locks nothing")
				require.Equal(t, uint64(0), f.participantCount())
				return
			}
			require.NoError(t, err)
			p := f.participant(1)
			require.Equal(t, c.bond, p.Bond)
			require.Equal(t, c.weight, p.Weight)
			require.Equal(t, before.Add(c.bond), f.held(), "the bond moved to the module account")
			require.True(t, f.bank.Balances(addr(1)).IsZero())
			require.Equal(t, uint64(1), f.participantCount())
		})
	}
}

// Attack: a module account (via governance) registers and can never get
// its bond back, which would fail the release boundary.
func TestRegisterParticipantRefusesAnAddressThatCannotReceiveItsBond(t *testing.T) {
	f := newFixture(t)
	f.block(1)
	module := authtypes.NewModuleAddress(types.ModuleName)
	fields := keeper.ParticipantFields{InferenceURL: nodeURL(1), Models: []string{"m"}, Weight: 1}
	err := f.k.RegisterParticipant(f.ctx, module, fields, testParams().ParticipantMinBond)
	require.ErrorIs(t, err, sdkerrors.ErrUnauthorized)
}

func TestUpdateParticipantKeepsWeightWithinTheBond(t *testing.T) {
	cases := []struct {
		name       string
		weight     uint64
		addBond    sdk.Coin
		wantErr    error
		wantWeight uint64
		wantBond   sdk.Coin
	}{
		{"lower weight, no bond added", 50, sdk.Coin{}, nil, 50, perWeight(100)},
		{"same bond, backed weight", 100, stake(0), nil, 100, perWeight(100)},
		{"lottery capture by self-declared weight: update above the bond", 101, sdk.Coin{}, types.ErrInvalidParticipantBond, 100, perWeight(100)},
		{"add_bond raises weight without leaving", 150, perWeight(50), nil, 150, perWeight(150)},
		{"add_bond too small for the weight", 151, perWeight(50), types.ErrInvalidParticipantBond, 100, perWeight(100)},
		{"attack: add_bond in a worthless denom", 100, sdk.NewInt64Coin("junk", 1), types.ErrInvalidParticipantBond, 100, perWeight(100)},
		{"attack: add_bond it does not have", 200, perWeight(1_000), sdkerrors.ErrInsufficientFunds, 100, perWeight(100)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, withParticipants(gp(1, 100, false, "m")))
			f.block(1)
			f.bank.Fund(addr(1), perWeight(50))
			before := f.held()
			err := f.updateWeight(1, c.weight, c.addBond)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				require.Equal(t, before, f.held())
			} else {
				require.NoError(t, err)
			}
			p := f.participant(1)
			require.Equal(t, c.wantWeight, p.Weight)
			require.Equal(t, c.wantBond, p.Bond)
			require.Equal(t, before.Add(c.wantBond).Sub(perWeight(100)), f.held(), "the module holds exactly the bond")
		})
	}
}

// The lifecycle of leaving, one table row per step from a fresh fixture:
// register in epoch 1 (so it has never been in a group), then act.
func TestDeregisterParticipantLifecycle(t *testing.T) {
	bond := perWeight(100)
	release := int64(1 + testEpochLength) // epoch 2 starts here
	type step func(t *testing.T, f *fixture)
	cases := []struct {
		name string
		run  step
	}{
		{"early deregistration: before ever joining a group", func(t *testing.T, f *fixture) {
			got, err := f.deregister(1)
			require.NoError(t, err)
			require.Equal(t, uint64(2), got)
			require.Equal(t, uint64(1), f.participant(1).LeavingEpoch)
			f.advanceTo(release)
			require.False(t, f.isParticipant(1))
			require.Empty(t, memberAddrs(f.group()), "it never joins")
			require.Equal(t, sdk.NewCoins(bond), f.bank.Balances(addr(1)))
		}},
		{"deregister twice", func(t *testing.T, f *fixture) {
			_, err := f.deregister(1)
			require.NoError(t, err)
			_, err = f.deregister(1)
			require.ErrorIs(t, err, types.ErrParticipantLeaving)
			require.ErrorContains(t, err, "released when epoch 2 starts")
		}},
		{"bond withdrawn while serving: not returned before the boundary", func(t *testing.T, f *fixture) {
			_, err := f.deregister(1)
			require.NoError(t, err)
			f.advanceTo(release - 1)
			require.True(t, f.bank.Balances(addr(1)).IsZero(), "the last block of the epoch still holds it")
			require.True(t, f.isParticipant(1))
			require.Equal(t, uint64(1), f.participantCount())
			f.begin(release) // exactly at the boundary
			require.Equal(t, sdk.NewCoins(bond), f.bank.Balances(addr(1)))
			require.False(t, f.isParticipant(1))
			require.Equal(t, uint64(0), f.participantCount())
			evs := typedEvents[*types.EventParticipantLeft](t, f.ctx)
			require.Len(t, evs, 1)
			require.Equal(t, bond, evs[0].Bond)
		}},
		{"register again while leaving is refused, after release accepted", func(t *testing.T, f *fixture) {
			_, err := f.deregister(1)
			require.NoError(t, err)
			err = f.registerWith(1, 100, bond, bond)
			require.ErrorIs(t, err, types.ErrParticipantLeaving)
			require.ErrorContains(t, err, "register again once epoch 2 has started")
			f.advanceTo(release)
			require.NoError(t, f.registerWith(1, 100, bond, stake(0)), "the returned bond pays for it")
			require.Equal(t, uint64(0), f.participant(1).LeavingEpoch)
		}},
		{"update while leaving is refused", func(t *testing.T, f *fixture) {
			_, err := f.deregister(1)
			require.NoError(t, err)
			require.ErrorIs(t, f.updateWeight(1, 10, sdk.Coin{}), types.ErrParticipantLeaving)
		}},
		{"unknown participant", func(t *testing.T, f *fixture) {
			_, err := f.deregister(2)
			require.ErrorIs(t, err, types.ErrParticipantNotFound)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.block(1)
			require.NoError(t, f.registerWith(1, 100, bond, bond))
			c.run(t, f)
		})
	}
}

// A leaving member serves out its epoch (the group is a snapshot) and is
// left out of the next group.
func TestLeavingMemberServesItsEpochThenLeavesTheGroup(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	f.advanceTo(testPocBlocks + 2)
	_, err := f.deregister(1)
	require.NoError(t, err)
	require.Equal(t, []string{bech(1), bech(2)}, memberAddrs(f.group()))
	f.mustStart("still-serving", 1, "m")
	require.NoError(t, f.finish(1, "still-serving"))
	f.advanceTo(1 + testEpochLength)
	require.Equal(t, []string{bech(2)}, memberAddrs(f.group()))
	require.Equal(t, uint32(1), mustEpoch(t, f).Members)
}

// Deregistering needs a running epoch: leaving_epoch 0 means "serving".
func TestDeregisterBeforeTheFirstBlockIsRefused(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m")))
	_, err := f.deregister(1)
	require.ErrorIs(t, err, types.ErrNoEpoch)
}

// registry fill: a full registry refuses newcomers; a departure frees its
// slot only once released, as a leaving participant still holds it.
func TestRegistryFullThenASlotFreedByADeparture(t *testing.T) {
	p := testParams()
	p.MaxParticipants = 2
	f := newFixture(t, withParams(p), withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	bond := perWeight(100)
	require.ErrorIs(t, f.registerWith(3, 100, bond, bond), types.ErrParticipantRegistryFull)
	_, err := f.deregister(1)
	require.NoError(t, err)
	require.ErrorIs(t, f.registerWith(3, 100, bond, stake(0)), types.ErrParticipantRegistryFull, "leaving holds its slot")
	f.advanceTo(1 + testEpochLength)
	require.Equal(t, uint64(1), f.participantCount())
	require.NoError(t, f.registerWith(3, 100, bond, stake(0)))
	require.Equal(t, uint64(2), f.participantCount())
}

// A departed executor's in-flight inference (started in its last epoch,
// finished after the boundary released it) closes and credits its agent;
// there are no participant stats left to count.
func TestDepartedExecutorFinishesItsInFlightInference(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	f.advanceTo(testEpochLength - 2)
	f.mustStart("last-epoch", 1, "m")
	_, err := f.deregister(1)
	require.NoError(t, err)
	f.advanceTo(1 + testEpochLength)
	require.False(t, f.isParticipant(1))
	finishedBefore := f.agent(agentByte).Standing.Finished
	require.NoError(t, f.finish(1, "last-epoch"))
	require.Equal(t, types.INFERENCE_STATUS_FINISHED, f.inference("last-epoch").Status)
	require.Equal(t, finishedBefore+1, f.agent(agentByte).Standing.Finished, "the agent is credited")
	f.block(f.height + 1) // the breaker step takes the queued outcome
	require.False(t, f.isParticipant(1), "a finish does not bring the record back")
}

// EndBlock expiry of a departed executor's inference must not halt the
// chain: the inference expires, the breaker judges the miss next block, and
// nothing needs the participant record.
func TestDepartedExecutorsInferenceExpiresWithoutHaltingTheChain(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	f.advanceTo(testEpochLength - 2)
	exp := f.mustStart("expires-after", 1, "m")
	require.Greater(t, exp, int64(1+testEpochLength), "it expires after the boundary")
	_, err := f.deregister(1)
	require.NoError(t, err)
	f.advanceTo(exp + 2) // boundary, expiry, then the breaker's step on the miss
	require.False(t, f.isParticipant(1))
	require.Equal(t, types.INFERENCE_STATUS_EXPIRED, f.inference("expires-after").Status)
	requireQueueEmpty(t, f)
	out, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, out.Validate(ac), "a departed executor's inferences and breaker state export")
}

// Governance raising participant_bond_per_weight lowers weights to what
// bonds back; changing the bond denom under bonded participants is refused.
func TestBondParamChangesKeepWeightWithinBonds(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 10, true, "m")))
	f.block(1)
	p := testParams()
	p.ParticipantBondPerWeight = p.ParticipantBondPerWeight.MulRaw(4)
	_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.NoError(t, err)
	require.Equal(t, uint64(25), f.participant(1).Weight)
	require.Equal(t, uint64(2), f.participant(2).Weight)

	p.ParticipantMinBond = sdk.NewInt64Coin("uother", p.ParticipantMinBond.Amount.Int64())
	_, err = f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
	require.ErrorIs(t, err, types.ErrInvalidParams)
	require.ErrorContains(t, err, "2 participants hold bonds in stake")
}

// Found by make test-sim: governance could lower max_participants (or
// max_transfer_agents) below the registry's size. Nothing evicts anyone and
// genesis Validate refuses a registry larger than its max, so the chain's
// own export could no longer be imported. Such a change is refused now;
// down to the registry's size it passes, and the export validates.
func TestRegistryShrunkBelowItsSizeWouldBreakExport(t *testing.T) {
	f := newFixture(t, withParticipants(gp(1, 100, true, "m"), gp(2, 100, true, "m")))
	f.block(1)
	update := func(edit func(*types.Params)) error {
		p := testParams()
		edit(&p)
		_, err := f.msg.UpdateParams(f.ctx, &types.MsgUpdateParams{Authority: authority(t), Params: p})
		return err
	}
	err := update(func(p *types.Params) { p.MaxParticipants = 1 })
	require.ErrorIs(t, err, types.ErrInvalidParams)
	require.ErrorContains(t, err, "below the 2 registered participants")
	agents := f.agentCount()
	require.Positive(t, agents)
	err = update(func(p *types.Params) { p.MaxTransferAgents = agents - 1 })
	require.ErrorIs(t, err, types.ErrInvalidParams)
	require.ErrorContains(t, err, "registered transfer agents")

	require.NoError(t, update(func(p *types.Params) { p.MaxParticipants, p.MaxTransferAgents = 2, agents }))
	gs, err := f.k.ExportGenesis(f.ctx)
	require.NoError(t, err)
	require.NoError(t, gs.Validate(f.k.AddressCodec()))
}
