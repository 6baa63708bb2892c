package testkit

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// RequireNear checks a count of draws got out of n against n*p, within 5
// standard deviations.
func RequireNear(t *testing.T, got int, n int, p float64, what string) {
	t.Helper()
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	require.InDelta(t, mean, float64(got), 5*sd+1, "%s: got %d, expected about %.0f", what, got, mean)
}

// Attested is one attested verdict a test queues for the next block.
type Attested struct {
	Executor sdk.AccAddress
	Miss     bool
}

// PackAttested packs the verdicts of a group of n as a health bundle
// carries them (verdict.Pack; unknown for everyone not attested), each
// executor at its group index.
func PackAttested(t testing.TB, n int, index func(sdk.AccAddress) (uint32, error), attested []Attested) []byte {
	t.Helper()
	vs := make([]verdict.Verdict, n)
	for _, a := range attested {
		i, err := index(a.Executor)
		require.NoError(t, err, "attested executor %s is not in the group", a.Executor)
		vs[i] = verdict.OK
		if a.Miss {
			vs[i] = verdict.Miss
		}
	}
	packed, err := verdict.Pack(vs)
	require.NoError(t, err)
	return packed
}
