package health

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/breaker"
	"github.com/inferenced/inferenced/x/inference/types"
)

// AttributePending gives every queued traffic outcome that has no agent
// (queued by a version-1 binary, before outcomes carried one) its
// inference's transfer agent and end height, read through inference. The
// queue holds at most one block's outcomes, so this touches a few entries.
// Without it those outcomes would reach the evidence ledger as misses of
// no agent ending at height 0, which genesis validation rejects.
//
// It returns the executor of every miss it attributed, one entry per miss
// in queue order: version 1 already counted each of them in its executor's
// epoch stats when it expired, which this binary does only once the ledger
// corroborates it (Migrate1to2 takes the first count back). A second run
// attributes nothing and returns nothing.
func (s Store) AttributePending(ctx context.Context, inference func(context.Context, string) (types.Inference, error)) ([]sdk.AccAddress, error) {
	var fix []queuedSample
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], v types.PendingSample) (bool, error) {
		if v.Agent == "" {
			fix = append(fix, queuedSample{key, v})
		}
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk pending samples: %w", err)
	}
	var misses []sdk.AccAddress
	for _, q := range fix {
		inf, err := inference(ctx, q.sample.InferenceId)
		if err != nil {
			return nil, fmt.Errorf("inference %q of a pending sample: %w", q.sample.InferenceId, err)
		}
		q.sample.Agent, q.sample.EndHeight = inf.TransferAgent, inf.EndHeight
		if err := s.pending.Set(ctx, q.key, q.sample); err != nil {
			return nil, fmt.Errorf("store attributed sample: %w", err)
		}
		if q.sample.Miss {
			misses = append(misses, q.key.K1())
		}
	}
	return misses, nil
}

// FillAttestedWindows gives every record that has not changed state since
// it was created (since height 0) a full attested window, keeping its
// samples: version 1 started the attested history of a record a traffic
// miss created empty, where this binary starts it as a full window of oks
// (judge.Fresh), so such a record would trip on two attested misses among
// its first few samples instead of the rule's run of misses. A record that
// changed state started its windows empty at the change in both versions
// (breaker.enter) and is left as it is; so is every state, gate and
// cooldown. Bits above a window's count are zero (Push shifts them in), so
// the samples it gains are oks.
func (s Store) FillAttestedWindows(ctx context.Context) error {
	var fix []entry
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if h.SinceHeight == 0 && h.Attested.Count < breaker.MaxWindow {
			fix = append(fix, entry{addr: addr, stored: true, rec: toBreaker(h), ledger: toLedger(h), probe: probeOf(h)})
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("walk breaker records: %w", err)
	}
	for _, before := range fix {
		after := before
		after.rec.Windows[breaker.Attested].Count = breaker.MaxWindow
		if err := s.save(ctx, before, after); err != nil {
			return err
		}
	}
	return nil
}

// UnattributedProbes lists, in address order, the probe inference ids of
// the records whose probe names no agent (stored by a version-3 binary,
// when ids were global): the ids AttributeProbes looks up. It writes
// nothing, so a migration can check every one names an inference before
// its first write.
func (s Store) UnattributedProbes(ctx context.Context) ([]string, error) {
	fix, err := s.unattributed(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(fix))
	for i, e := range fix {
		ids[i] = e.probe.id
	}
	return ids, nil
}

// unattributed is every record whose probe names no agent. Only PROBE
// records with a probe in flight carry one, a few per epoch.
func (s Store) unattributed(ctx context.Context) ([]entry, error) {
	var fix []entry
	if err := s.records.Walk(ctx, nil, func(addr sdk.AccAddress, h types.ExecutorHealth) (bool, error) {
		if h.ProbeInferenceId != "" && h.ProbeAgent == "" {
			fix = append(fix, entry{addr: addr, stored: true, rec: toBreaker(h), ledger: toLedger(h), probe: probeOf(h)})
		}
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("walk breaker records: %w", err)
	}
	return fix, nil
}

// AttributeProbes gives every record UnattributedProbes lists the transfer
// agent of its probe inference, read through agentOf. It looks every agent
// up before its first write, so a probe agentOf cannot place leaves every
// record as it was. Without it the probe's outcome, which carries its
// agent, would not match the probe and hold the slot until the epoch ends.
func (s Store) AttributeProbes(ctx context.Context, agentOf func(context.Context, string) (string, error)) error {
	fix, err := s.unattributed(ctx)
	if err != nil {
		return err
	}
	after := make([]entry, len(fix))
	for i, before := range fix {
		agent, err := agentOf(ctx, before.probe.id)
		if err != nil {
			return fmt.Errorf("probe inference %q of %s: %w", before.probe.id, before.addr, err)
		}
		after[i] = before
		after[i].probe.agent = agent
	}
	for i, before := range fix {
		if err := s.save(ctx, before, after[i]); err != nil {
			return err
		}
	}
	return nil
}
