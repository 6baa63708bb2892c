package breakerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"cosmossdk.io/collections"
)

// itemOrZero reads an item of the store; an absent one reads as T's zero
// (found false). what names it in errors.
func itemOrZero[T any](ctx context.Context, item collections.Item[T], what string) (v T, found bool, err error) {
	v, err = item.Get(ctx)
	if errors.Is(err, collections.ErrNotFound) {
		var zero T
		return zero, false, nil
	}
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("load breaker %s: %w", what, err)
	}
	return v, true, nil
}

// setOrDrop writes v to an item, or drops the item when present is false
// (the item is absent rather than empty).
func setOrDrop[T any](ctx context.Context, item collections.Item[T], v T, present bool, what string) error {
	if !present {
		if err := item.Remove(ctx); err != nil {
			return fmt.Errorf("drop breaker %s: %w", what, err)
		}
		return nil
	}
	if err := item.Set(ctx, v); err != nil {
		return fmt.Errorf("store breaker %s: %w", what, err)
	}
	return nil
}

// The items' JSON form is their binary encoding as a JSON string.

func encodeJSON[T any](encode func(T) ([]byte, error), v T) ([]byte, error) {
	b, err := encode(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(b)
}

func decodeJSON[T any](decode func([]byte) (T, error), in []byte) (T, error) {
	var b []byte
	if err := json.Unmarshal(in, &b); err != nil {
		var zero T
		return zero, err
	}
	return decode(b)
}
