package health

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// AttributePending gives every queued traffic outcome that has no agent
// (queued by a version-1 binary, before outcomes carried one) its
// inference's transfer agent and end height, read through inference. The
// queue holds at most one block's outcomes, so this touches a few entries.
// Without it those outcomes would reach the evidence ledger as misses of
// no agent ending at height 0, which genesis validation rejects.
func (s Store) AttributePending(ctx context.Context, inference func(context.Context, string) (types.Inference, error)) error {
	var fix []queuedSample
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], v types.PendingSample) (bool, error) {
		if v.Agent == "" {
			fix = append(fix, queuedSample{key, v})
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk pending samples: %w", err)
	}
	for _, q := range fix {
		inf, err := inference(ctx, q.sample.InferenceId)
		if err != nil {
			return fmt.Errorf("inference %q of a pending sample: %w", q.sample.InferenceId, err)
		}
		q.sample.Agent, q.sample.EndHeight = inf.TransferAgent, inf.EndHeight
		if err := s.pending.Set(ctx, q.key, q.sample); err != nil {
			return fmt.Errorf("store attributed sample: %w", err)
		}
	}
	return nil
}

// AttributeProbes gives every record whose probe names no agent (stored by
// a version-3 binary, when ids were global) the transfer agent of its probe
// inference, read through agentOf. Only PROBE records with a probe in
// flight carry one, a few per epoch. Without it the probe's outcome, which
// carries its agent, would not match the probe and hold the slot until the
// epoch ends.
func (s Store) AttributeProbes(ctx context.Context, agentOf func(context.Context, string) (string, error)) error {
	var fix []entry
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if h.ProbeInferenceId != "" && h.ProbeAgent == "" {
			fix = append(fix, entry{addr: addr, stored: true, rec: toBreaker(h), ledger: toLedger(h), probe: probeOf(h)})
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	for _, before := range fix {
		agent, err := agentOf(ctx, before.probe.id)
		if err != nil {
			return fmt.Errorf("probe inference %q of %s: %w", before.probe.id, before.addr, err)
		}
		after := before
		after.probe.agent = agent
		if err := s.save(ctx, before, after); err != nil {
			return err
		}
	}
	return nil
}
