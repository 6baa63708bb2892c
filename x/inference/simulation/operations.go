package simulation

import (
	"context"
	"errors"
	"fmt"
	"math/rand"

	"github.com/cosmos/cosmos-sdk/baseapp"
	"github.com/cosmos/cosmos-sdk/client"
	simtestutil "github.com/cosmos/cosmos-sdk/testutil/sims"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/module"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"
	simx "github.com/cosmos/cosmos-sdk/x/simulation"

	"github.com/inferenced/inferenced/x/inference/keeper"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Operation weights: the keys a -Params file may set, and their defaults.
// Starts and finishes dominate, as on a live chain; registrations come
// often enough to fill the small registries RandomParams draws. Together
// they are about half of all operations (the SDK modules' weigh ~1,000).
const (
	OpWeightRegisterParticipant   = "op_weight_msg_register_participant"
	OpWeightUpdateParticipant     = "op_weight_msg_update_participant"
	OpWeightDeregisterParticipant = "op_weight_msg_deregister_participant"
	OpWeightRegisterTransferAgent = "op_weight_msg_register_transfer_agent"
	OpWeightLeaveTransferAgent    = "op_weight_msg_leave_transfer_agent"
	OpWeightStartInference        = "op_weight_msg_start_inference"
	OpWeightFinishInference       = "op_weight_msg_finish_inference"
	OpWeightUpdateParams          = "op_weight_msg_update_params"
	OpWeightInvariants            = "op_weight_inference_invariants"

	DefaultWeightRegisterParticipant   = 40
	DefaultWeightUpdateParticipant     = 15
	DefaultWeightDeregisterParticipant = 5
	DefaultWeightRegisterTransferAgent = 25
	DefaultWeightLeaveTransferAgent    = 4
	DefaultWeightStartInference        = 200
	DefaultWeightFinishInference       = 150
	DefaultWeightUpdateParams          = 5
	DefaultWeightInvariants            = 10
)

// AccountKeeper is what the operations read of x/auth: account numbers and
// sequences to sign with.
type AccountKeeper interface {
	GetAccount(ctx context.Context, addr sdk.AccAddress) sdk.AccountI
}

// BankKeeper is what the operations and the invariants read of x/bank.
type BankKeeper interface {
	SpendableCoins(ctx context.Context, addr sdk.AccAddress) sdk.Coins
	GetBalance(ctx context.Context, addr sdk.AccAddress, denom string) sdk.Coin
}

// env is what every operation works with.
type env struct {
	k     keeper.Keeper
	ak    AccountKeeper
	bk    BankKeeper
	txCfg client.TxConfig
	idx   indexes
}

// WeightedOperations returns one operation per message (and the invariant
// check), each weighted by the sim params file or its default.
func WeightedOperations(simState module.SimulationState, k keeper.Keeper, ak AccountKeeper, bk BankKeeper) []simtypes.WeightedOperation {
	e := env{k: k, ak: ak, bk: bk, txCfg: simState.TxConfig, idx: newIndexes(k)}
	weight := func(key string, def int) int {
		w := def
		simState.AppParams.GetOrGenerate(key, &w, nil, func(*rand.Rand) { w = def })
		return w
	}
	return []simtypes.WeightedOperation{
		simx.NewWeightedOperation(weight(OpWeightRegisterParticipant, DefaultWeightRegisterParticipant), e.registerParticipant),
		simx.NewWeightedOperation(weight(OpWeightUpdateParticipant, DefaultWeightUpdateParticipant), e.updateParticipant),
		simx.NewWeightedOperation(weight(OpWeightDeregisterParticipant, DefaultWeightDeregisterParticipant), e.deregisterParticipant),
		simx.NewWeightedOperation(weight(OpWeightRegisterTransferAgent, DefaultWeightRegisterTransferAgent), e.registerTransferAgent),
		simx.NewWeightedOperation(weight(OpWeightLeaveTransferAgent, DefaultWeightLeaveTransferAgent), e.leaveTransferAgent),
		simx.NewWeightedOperation(weight(OpWeightStartInference, DefaultWeightStartInference), e.startInference),
		simx.NewWeightedOperation(weight(OpWeightFinishInference, DefaultWeightFinishInference), e.finishInference),
		simx.NewWeightedOperation(weight(OpWeightUpdateParams, DefaultWeightUpdateParams), e.updateParams),
		simx.NewWeightedOperation(weight(OpWeightInvariants, DefaultWeightInvariants), e.checkInvariants),
	}
}

// outcome is what an operation expects of its message: want nil for a
// valid one (it must succeed), else the documented error (compared with
// errors.Is, which for registered errors compares codespace and code) and
// what makes the message invalid.
type outcome struct {
	want error
	why  string
}

func valid() outcome { return outcome{} }

func invalid(want error, why string) outcome { return outcome{want: want, why: why} }

// deliver signs msg by signer (no fees: the sim sets no minimum gas price)
// and delivers it in the block being simulated, then judges the result:
// a valid message must succeed; an invalid one must fail with the
// documented error, and is reported as a no-op with the reason. Anything
// else fails the simulation.
func (e env) deliver(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, chainID string,
	signer simtypes.Account, msg sdk.Msg, o outcome,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	name := sdk.MsgTypeURL(msg)
	acc := e.ak.GetAccount(ctx, signer.Address)
	if acc == nil {
		return skip(msg, "signer has no account"), nil, nil
	}
	tx, err := simtestutil.GenSignedMockTx(r, e.txCfg, []sdk.Msg{msg}, sdk.NewCoins(), simtestutil.DefaultGenTxGas, chainID,
		[]uint64{acc.GetAccountNumber()}, []uint64{acc.GetSequence()}, signer.PrivKey)
	if err != nil {
		return simtypes.NoOpMsg(types.ModuleName, name, "unable to sign"), nil, fmt.Errorf("sign %s: %w", name, err)
	}
	_, _, err = app.SimDeliver(e.txCfg.TxEncoder(), tx)
	return judge(msg, err, o)
}

// judge compares a delivery's error with the expected outcome.
func judge(msg sdk.Msg, err error, o outcome) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	name := sdk.MsgTypeURL(msg)
	switch {
	case o.want == nil && err == nil:
		return simtypes.NewOperationMsg(msg, true, ""), nil, nil
	case o.want == nil:
		return simtypes.NoOpMsg(types.ModuleName, name, "valid message failed"), nil, fmt.Errorf("valid %s failed: %w", name, err)
	case err == nil:
		return simtypes.NoOpMsg(types.ModuleName, name, o.why), nil, fmt.Errorf("invalid %s (%s) was accepted; want %v", name, o.why, o.want)
	case !errors.Is(err, o.want):
		return simtypes.NoOpMsg(types.ModuleName, name, o.why), nil, fmt.Errorf("invalid %s (%s): want %v, got %w", name, o.why, o.want, err)
	}
	return simtypes.NoOpMsg(types.ModuleName, name, "refused as documented: "+o.why), nil, nil
}

// skip reports an operation that found nothing to do (no message sent).
func skip(msg sdk.Msg, why string) simtypes.OperationMsg {
	return simtypes.NoOpMsg(types.ModuleName, sdk.MsgTypeURL(msg), why)
}

// chance is true with probability pct/100.
func chance(r *rand.Rand, pct int) bool { return r.Intn(100) < pct }

// fromStranger delivers msg, signed by a random account for which is
// reports false (setSigner names it in msg), expecting want.
func (e env) fromStranger(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
	msg sdk.Msg, setSigner func(string), is func(sdk.AccAddress) bool, want outcome,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	acc, ok := stranger(r, accs, is)
	if !ok {
		return skip(msg, "no account to send it from"), nil, nil
	}
	setSigner(acc.Address.String())
	return e.deliver(r, app, ctx, chainID, acc, msg, want)
}

// holder is a bond holder, participant or agent: its address and the epoch
// it asked to leave in (0: serving).
type holder struct {
	address string
	leaving uint64
}

// leave is the shape both leaving messages share: mostly a random holder
// leaves (leaving twice is refused with leavingErr); sometimes an account
// that holds nothing asks (notHolder). newMsg builds the message its
// signer sends.
func (e env) leave(r *rand.Rand, app *baseapp.BaseApp, ctx sdk.Context, accs []simtypes.Account, chainID string,
	newMsg func(signer string) sdk.Msg, holders func(sdk.Context) ([]holder, error), is func(sdk.AccAddress) bool,
	notHolder, leavingErr error,
) (simtypes.OperationMsg, []simtypes.FutureOperation, error) {
	hs, err := holders(ctx)
	if err != nil {
		return skip(newMsg(""), "walk bond holders"), nil, err
	}
	if len(hs) == 0 || chance(r, 10) {
		acc, ok := stranger(r, accs, is)
		if !ok {
			return skip(newMsg(""), "no account to send it from"), nil, nil
		}
		return e.deliver(r, app, ctx, chainID, acc, newMsg(acc.Address.String()), invalid(notHolder, "leave by an account that holds no bond"))
	}
	h := hs[r.Intn(len(hs))]
	acc, ok := simAccount(accs, h.address)
	if !ok {
		return skip(newMsg(h.address), "bond holder is not a sim account"), nil, nil
	}
	o := valid()
	if h.leaving != 0 {
		o = invalid(leavingErr, "leaving twice")
	}
	return e.deliver(r, app, ctx, chainID, acc, newMsg(h.address), o)
}
