package types

import "context"

// InferenceHooks lets other parts of the app react to inference outcomes and
// epoch boundaries (the circuit breaker takes its traffic samples here). A
// returned error aborts the transaction or block step that caused it.
type InferenceHooks interface {
	AfterInferenceFinished(ctx context.Context, inf Inference) error
	AfterInferenceExpired(ctx context.Context, inf Inference) error
	AfterEpochStarted(ctx context.Context, epoch Epoch) error
}

// MultiInferenceHooks calls several hooks in order, stopping at the first error.
type MultiInferenceHooks []InferenceHooks

var _ InferenceHooks = MultiInferenceHooks{}

func (h MultiInferenceHooks) AfterInferenceFinished(ctx context.Context, inf Inference) error {
	for _, hook := range h {
		if err := hook.AfterInferenceFinished(ctx, inf); err != nil {
			return err
		}
	}
	return nil
}

func (h MultiInferenceHooks) AfterInferenceExpired(ctx context.Context, inf Inference) error {
	for _, hook := range h {
		if err := hook.AfterInferenceExpired(ctx, inf); err != nil {
			return err
		}
	}
	return nil
}

func (h MultiInferenceHooks) AfterEpochStarted(ctx context.Context, epoch Epoch) error {
	for _, hook := range h {
		if err := hook.AfterEpochStarted(ctx, epoch); err != nil {
			return err
		}
	}
	return nil
}
