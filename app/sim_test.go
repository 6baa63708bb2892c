//go:build sims

package app

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cosmos/cosmos-sdk/testutil/simsx"
	simtypes "github.com/cosmos/cosmos-sdk/types/simulation"
)

// TestFullAppSimulation runs the simulation for each seed and checks
// x/inference's invariants on the final state (they also run during the
// simulation, as an operation).
func TestFullAppSimulation(t *testing.T) {
	simsx.RunWithSeeds(t, newSimApp, setupStateFactory, simSeeds(t), nil,
		func(tb testing.TB, ti simsx.TestInstance[*App], _ []simtypes.Account) {
			checkInferenceInvariants(tb, ti.App)
		})
}

// TestAppStateDeterminism runs each seed three times and requires the
// same app hash every time.
func TestAppStateDeterminism(t *testing.T) {
	const runs = 3
	var seeds []int64
	for _, s := range simSeeds(t)[:1] {
		for range runs {
			seeds = append(seeds, s)
		}
	}
	var mu sync.Mutex
	hashes := map[int64][][]byte{}
	simsx.RunWithSeeds(t, newSimApp, setupStateFactory, seeds, nil,
		func(tb testing.TB, ti simsx.TestInstance[*App], _ []simtypes.Account) {
			hash := ti.App.LastCommitID().Hash
			mu.Lock()
			defer mu.Unlock()
			seed := ti.Cfg.Seed
			hashes[seed] = append(hashes[seed], hash)
			for i, h := range hashes[seed] {
				require.True(tb, bytes.Equal(hashes[seed][0], h), "seed %d: run %d app hash %X, run 1 %X", seed, i+1, h, hashes[seed][0])
			}
			tb.Logf("seed %d: %d of %d runs agree on app hash %X at height %d", seed, len(hashes[seed]), runs, hash, ti.App.LastBlockHeight())
		})
}
