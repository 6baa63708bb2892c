package breakerstore

import (
	"context"
	"fmt"

	"cosmossdk.io/collections"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/types"
)

// What the store offers the module's migrations (x/inference/migrations):
// they decide what a stored record or queued outcome of an older version
// becomes; the store writes it, through save for records, so the derived
// indexes stay in step.

// EachRecord calls visit with every breaker record, in address order, as
// it reads under the streaks item. It writes nothing.
func (s Store) EachRecord(ctx context.Context, visit func(types.ExecutorHealth) error) error {
	return s.walkEffective(ctx, func(_ sdk.AccAddress, h types.ExecutorHealth) error { return visit(h) })
}

// RewriteRecords asks fix about every breaker record, in address order,
// as it reads under the streaks item, and only then stores each record it
// changed (changed true): a fix that fails leaves every record as it was.
func (s Store) RewriteRecords(ctx context.Context, fix func(types.ExecutorHealth) (h types.ExecutorHealth, changed bool, err error)) error {
	var before, after []entry
	if err := s.walkEffective(ctx, func(addr sdk.AccAddress, h types.ExecutorHealth) error {
		fixed, changed, err := fix(h)
		if err != nil || !changed {
			return err
		}
		before, after = append(before, entryOf(addr, h)), append(after, entryOf(addr, fixed))
		return nil
	}); err != nil {
		return fmt.Errorf("rewrite breaker records: %w", err)
	}
	for i := range before {
		if err := s.save(ctx, before[i], after[i]); err != nil {
			return err
		}
	}
	return nil
}

// RewritePending asks fix about every queued outcome, in key order (by
// executor, then as queued), and only then stores each it changed.
func (s Store) RewritePending(ctx context.Context, fix func(executor sdk.AccAddress, p types.PendingSample) (types.PendingSample, bool, error)) error {
	var keys []collections.Pair[sdk.AccAddress, uint64]
	var fixed []types.PendingSample
	if err := s.pending.Walk(ctx, nil, func(key collections.Pair[sdk.AccAddress, uint64], p types.PendingSample) (bool, error) {
		q, changed, err := fix(key.K1(), p)
		if err != nil || !changed {
			return err != nil, err
		}
		keys, fixed = append(keys, key), append(fixed, q)
		return false, nil
	}); err != nil {
		return fmt.Errorf("rewrite pending samples: %w", err)
	}
	for i, key := range keys {
		if err := s.pending.Set(ctx, key, fixed[i]); err != nil {
			return fmt.Errorf("store rewritten sample: %w", err)
		}
	}
	return nil
}
