package breakerstore

import (
	"context"
	"fmt"

	errorsmod "cosmossdk.io/errors"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/judge"
	"github.com/inferenced/inferenced/x/inference/types"
)

// ClaimProbe gives a just-started inference the probe slot of a PROBE
// executor whose slot is free: its outcome alone decides the probe. An
// agent whose earlier probe of this PROBE period expired uncorroborated is
// refused with ErrProbeTaken, and nothing is written: otherwise one account
// could take every probe and let it expire, keeping a recovered executor
// out for the whole epoch. (In shadow mode the keeper lets that start
// through as no probe.)
func (s Store) ClaimProbe(ctx context.Context, executor sdk.AccAddress, agent, inferenceID string) error {
	before, err := s.load(ctx, executor)
	if err != nil {
		return err
	}
	rec, claim := judge.ClaimProbe(judge.Executor{Record: before.rec, Ledger: before.ledger}, agent)
	if claim == judge.NoProbe {
		return nil
	}
	address, err := s.ac.BytesToString(executor)
	if err != nil {
		return fmt.Errorf("encode executor: %w", err)
	}
	if claim == judge.Refused {
		return errorsmod.Wrapf(types.ErrProbeTaken,
			"the probe of executor %s that transfer agent %s started expired without corroboration; another agent must probe it", address, agent)
	}
	after := before
	after.rec, after.probe = rec, probeRef{agent: agent, id: inferenceID}
	if err := s.save(ctx, before, after); err != nil {
		return err
	}
	sdkCtx := sdk.UnwrapSDKContext(ctx)
	return types.EmitEvent(ctx, &types.EventProbeStarted{
		Executor: address, InferenceId: inferenceID, TransferAgent: agent, Height: sdkCtx.BlockHeight(),
	})
}
