package simulation_test

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/simulation"
	"github.com/inferenced/inferenced/x/inference/types"
)

// Every random params set passes Validate (RandomParams would panic
// otherwise), and every invalid variant the operations send fails it,
// with ErrInvalidParams from ValidateBasic.
func TestRandomParamsAreValidAndInvalidParamsAreNot(t *testing.T) {
	for seed := int64(0); seed < 3000; seed++ {
		r := rand.New(rand.NewSource(seed))
		p := simulation.RandomParams(r)
		require.NoError(t, p.Validate(), "seed %d", seed)
		require.Equal(t, simulation.BondDenom, p.ParticipantBondDenom())
		bad, why := simulation.InvalidParams(r, p)
		require.Error(t, bad.Validate(), "seed %d: %s", seed, why)
		msg := types.MsgUpdateParams{Params: bad}
		require.True(t, errors.Is(msg.ValidateBasic(), types.ErrInvalidParams), "seed %d: %s", seed, why)
	}
}

// The same seed draws the same params.
func TestRandomParamsAreSeeded(t *testing.T) {
	a := simulation.RandomParams(rand.New(rand.NewSource(42)))
	b := simulation.RandomParams(rand.New(rand.NewSource(42)))
	require.Equal(t, a, b)
}
