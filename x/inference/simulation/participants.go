package simulation

import (
	"fmt"
	"math/rand"

	"cosmossdk.io/math"

	"github.com/cosmos/cosmos-sdk/baseapp"
	sdk "github.com/cosmos/cosmos-sdk/types"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"

	"github.com/inferenced/inferenced/x/inference/types"
)

// models are the models sim executors serve and agents ask for.
var models = []string{"llama-3-8b", "qwen-2.5-7b", "mistral-7b"}

// badURLs are inference URLs ValidateInferenceURL refuses.
var badURLs = []string{"", "ftp://exec.sim/v1", "http://user:pw@exec.sim", "http://exec.sim/v1?key=1", "exec.sim:8080"}

func randomModels(r *rand.Rand) []string {
	n := 1 + r.Intn(len(models))
	perm := r.Perm(len(models))
	out := make([]string, n)
	for i := range out {
		out[i] = models[perm[i]]
	}
	return out
}

func randomURL(r *rand.Rand) string {
	return fmt.Sprintf("http://exec-%d.sim:%d/v1", r.Intn(1000), 8000+r.Intn(100))
}

// affordable draws a bond in [lo, 3 lo] that addr can pay, if it can.
func (e env) affordable(ctx sdk.Context, r *rand.Rand, addr sdk.AccAddress, lo math.Int) (sdk.Coin, bool) {
	amount := lo.Add(math.NewInt(r.Int63n(2)).Mul(lo)).Add(math.NewInt(r.Int63n(1000)))
	if e.bk.SpendableCoins(ctx, addr).AmountOf(BondDenom).LT(amount) {
		return sdk.Coin{}, false
	}
	return sdk.NewCoin(BondDenom, amount), true
}

// registerParticipant registers a new executor with a bond backing its
// weight; invalid variants: a bond below participant_min_bond, a weight
// its bond does not back, a bad URL, registering twice. A full registry
// is refused as documented.
func (e env) registerParticipant(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgRegisterParticipant{InferenceUrl: randomURL(r), Models: randomModels(r), PocAvailable: r.Intn(4) != 0}
	params, ps, err := e.participantState(ctx)
	if err != nil {
		return skip(msg, "read params and participants"), nil, err
	}
	if len(ps) > 0 && chance(r, 10) { // duplicate registration
		p := ps[r.Intn(len(ps))]
		acc, ok := simAccount(accs, p.Address)
		if !ok {
			return skip(msg, "participant is not a sim account"), nil, nil
		}
		msg.Creator, msg.Weight, msg.Bond = p.Address, 1, params.ParticipantMinBond
		want := invalid(types.ErrParticipantExists, "already registered")
		if p.LeavingEpoch != 0 {
			want = invalid(types.ErrParticipantLeaving, "registering again while leaving")
		}
		return e.deliver(r, app, ctx, chainID, acc, msg, want)
	}
	acc, ok := stranger(r, accs, e.isParticipant(ctx))
	if !ok {
		return skip(msg, "no unregistered account"), nil, nil
	}
	msg.Creator = acc.Address.String()
	bond, ok := e.affordable(ctx, r, acc.Address, params.ParticipantMinBond.Amount)
	if !ok {
		return skip(msg, "account cannot afford the minimum bond"), nil, nil
	}
	msg.Bond = bond
	limit := types.WeightCap(bond, params)
	msg.Weight = randomWeight(r, limit)
	o := valid()
	switch n := r.Intn(100); {
	case n < 8 && params.ParticipantMinBond.Amount.GT(math.OneInt()):
		msg.Bond = sdk.NewCoin(BondDenom, params.ParticipantMinBond.Amount.SubRaw(1))
		msg.Weight = 1
		o = invalid(types.ErrInvalidParticipantBond, "bond below participant_min_bond")
	case n < 14:
		msg.Weight = limit + 1
		o = invalid(types.ErrInvalidParticipantBond, "weight above what the bond backs")
	case n < 20:
		msg.InferenceUrl = badURLs[r.Intn(len(badURLs))]
		o = invalid(types.ErrInvalidParticipant, fmt.Sprintf("bad inference URL %q", msg.InferenceUrl))
	default:
		count, err := e.k.ParticipantCount.Get(ctx)
		if err == nil && count >= params.MaxParticipants {
			o = invalid(types.ErrParticipantRegistryFull, "registry full")
		}
	}
	return e.deliver(r, app, ctx, chainID, acc, msg, o)
}

// updateParticipant changes a participant's URL, models and weight and
// sometimes adds bond; invalid variants: a weight above what the bond
// backs, a bad URL, an account that never registered. A leaving
// participant is refused as documented.
func (e env) updateParticipant(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	msg := &types.MsgUpdateParticipant{InferenceUrl: randomURL(r), Models: randomModels(r), PocAvailable: r.Intn(4) != 0}
	params, ps, err := e.participantState(ctx)
	if err != nil {
		return skip(msg, "read params and participants"), nil, err
	}
	if len(ps) == 0 || chance(r, 8) {
		msg.Weight = 1
		return e.fromStranger(r, app, ctx, accs, chainID, msg, func(a string) { msg.Creator = a }, e.isParticipant(ctx),
			invalid(types.ErrParticipantNotFound, "update by an account that never registered"))
	}
	p := ps[r.Intn(len(ps))]
	acc, ok := simAccount(accs, p.Address)
	if !ok {
		return skip(msg, "participant is not a sim account"), nil, nil
	}
	msg.Creator = p.Address
	bond := p.Bond
	if chance(r, 30) {
		if add, ok := e.affordable(ctx, r, acc.Address, params.ParticipantBondPerWeight); ok {
			msg.AddBond, bond = add, bond.Add(add)
		}
	}
	limit := types.WeightCap(bond, params)
	msg.Weight = randomWeight(r, limit)
	o := valid()
	switch n := r.Intn(100); {
	case p.LeavingEpoch != 0:
		o = invalid(types.ErrParticipantLeaving, "update while leaving")
	case n < 8:
		msg.Weight = limit + 1
		o = invalid(types.ErrInvalidParticipantBond, "weight above what the bond backs")
	case n < 14:
		msg.InferenceUrl = badURLs[r.Intn(len(badURLs))]
		o = invalid(types.ErrInvalidParticipant, fmt.Sprintf("bad inference URL %q", msg.InferenceUrl))
	}
	return e.deliver(r, app, ctx, chainID, acc, msg, o)
}

// deregisterParticipant asks a participant to leave; invalid variants: an
// account that never registered, leaving twice.
func (e env) deregisterParticipant(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	return e.leave(r, app, ctx, accs, chainID, func(c string) sdk.Msg { return &types.MsgDeregisterParticipant{Creator: c} },
		func(ctx sdk.Context) ([]holder, error) {
			ps, err := participants(ctx, e.k)
			hs := make([]holder, len(ps))
			for i, p := range ps {
				hs[i] = holder{address: p.Address, leaving: p.LeavingEpoch}
			}
			return hs, err
		}, e.isParticipant(ctx), types.ErrParticipantNotFound, types.ErrParticipantLeaving)
}

// isParticipant reports a registered participant.
func (e env) isParticipant(ctx sdk.Context) func(sdk.AccAddress) bool {
	return func(a sdk.AccAddress) bool {
		has, _ := e.k.Participants.Has(ctx, a)
		return has
	}
}

// participantState is the params and the registered participants.
func (e env) participantState(ctx sdk.Context) (types.Params, []types.Participant, error) {
	params, err := e.k.Params.Get(ctx)
	if err != nil {
		return params, nil, err
	}
	ps, err := participants(ctx, e.k)
	return params, ps, err
}

// randomWeight is a weight in [1, limit] (limit at least 1: types.WeightCap).
func randomWeight(r *rand.Rand, limit uint64) uint64 {
	return 1 + uint64(r.Int63n(int64(min(limit, 1<<20))))
}
