package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cosmos/gogoproto/proto"

	ln "github.com/inferenced/inferenced/tests/internal/localnet"
	"github.com/inferenced/inferenced/x/inference/types"
)

// rotationWindow is how many blocks after the rotation's block the
// scenario checks (and 2 before it).
const rotationWindow = 10

// rotateToJoinedNode is scenario 13's (d): validator 3's consensus key
// rotated, mid-epoch and while attestation runs, to node 4's (joined by
// state sync with its health monitor on), by the SDK's zero-downtime
// procedure: validator 3's operator submits MsgRotateConsPubKey to node
// 4's key in block S; CometBFT takes the new key from S+2 (EndBlock S says
// old@0, new@power), staking swaps it in EndBlock S+2. Node 3 keeps
// running, a full node from S+2. Exec0 goes dark right after the
// rotation is sent, so its exclusion is voted across the swap.
//
// Asserted: apply height S+2; node 3's key signs S+1 and not S+2, node
// 4's signs S+2 and not S+1 (CometBFT's sets and commits); every health
// bundle of S-2..S+10 verifies again outside the chain (each extension
// against the key CometBFT held for its validator at that height, then
// proposals.Check) with valid extensions from more than 2/3 of the power,
// and none pruned by its proposer (a vote the app could not match to a
// key); the rotated validator's extension counts under its old address
// in S+2's bundle and under its new one from S+3's, and node 4 attests
// (a non-empty extension: its monitor starts on its first vote, S+2's,
// which abstains); exec0 excluded by attestation within
// maxBlocksToExclusion; app hashes equal on nodes 0-4 (headers, and each
// node's own results) over the window; node 3 follows the chain with no
// power; x/slashing's signing info moves to the new address with its
// start height, and the old address has none.
func rotateToJoinedNode(t *testing.T, n *ln.Net) ln.Rotation {
	t.Helper()
	begin := time.Now()
	oldAddr, newAddr := n.ValidatorAddr(3), n.ValidatorAddr(4)
	if p, err := n.VotingPower(4); err != nil || p != 0 {
		t.Fatalf("node 4 before the rotation: power %d (%v), want a full node", p, err)
	}
	// Exec3, dark since (a), comes back: out, it holds 130 of the group's
	// 460 weight, and the breaker keeps at most half of it out
	// (health_cb_max_excluded_weight_pct 50), which exec0 (100) still fits
	// beside it; the restart's exec2 needs exec3 back in.
	n.Up(3)
	hash := n.SendRotation("val3", n.ConsPubKey(4))
	dark := n.Outage(0).Dark()
	rot := n.AwaitRotation(hash, time.Minute)
	s := rot.TxHeight
	if rot.Old != oldAddr || rot.New != newAddr || rot.ApplyHeight != s+2 {
		t.Fatalf("rotation in block %d: %s -> %s applied at %d; want %s -> %s at %d",
			s, rot.Old, rot.New, rot.ApplyHeight, oldAddr, newAddr, s+2)
	}
	if first := dark.DarkAt + 1; first < s-1 || first > s+2 {
		t.Fatalf("exec0 dark from block %d: outside the rotation window %d..%d", first, s-1, s+2)
	}
	dark.AwaitExclusion(0, time.Minute).Evidence()
	n.WaitHeight(s+rotationWindow+2, 2*time.Minute)

	checkSigners(t, n, rot)
	firstNew := checkBundles(t, n, rot, dark)
	toExclusion := dark.ExcludedAt - (dark.DarkAt + 1)
	if dark.Kind != ln.Attested || toExclusion > maxBlocksToExclusion {
		t.Errorf("exec0 excluded %d blocks after its first dark block by %s evidence; want attestation within %d",
			toExclusion, dark.Kind, maxBlocksToExclusion)
	}
	if err := n.SameAppHashes(s-2, s+rotationWindow+1, 1, 2, 3, 4); err != nil {
		t.Error(err)
	}
	for _, i := range []int{1, 2, 3, 4} {
		if err := n.SameResultAppHashes(i, s-2, s+rotationWindow); err != nil {
			t.Error(err)
		}
	}
	n.WaitCaughtUp(3, time.Minute)
	p3, err3 := n.VotingPower(3)
	p4, err4 := n.VotingPower(4)
	if err3 != nil || err4 != nil || p3 != 0 || p4 <= 0 {
		t.Errorf("after the rotation: node 3 power %d (%v), node 4 power %d (%v); want 0 and the validator's", p3, err3, p4, err4)
	}
	before, after := checkSigningInfo(t, n, rot)
	// Every executor serving and HEALTHY again, for (b) and the restart.
	dark.Up().AwaitRecovery(3 * time.Minute)
	n.WaitHealth(n.ExecutorAddr(3), "exec3 back", 3*time.Minute, func(h ln.HealthJSON) bool { return h.State == ln.Healthy })
	t.Logf("(d) key rotation: validator 3 (%s) rotated in block %d to node 4's key, applied at %d (fee %s): %s -> %s; "+
		"first commit with its vote under the new address: %d's; exec0 dark from %d, excluded at %d (%d blocks, %s evidence); "+
		"node 3 a full node at %d; signing info start %s, index %s at %d under the old address, %s at %d under the new; "+
		"app hashes equal on nodes 0-4 over %d..%d; wall time of (d) %s",
		rot.Validator, s, rot.ApplyHeight, rot.FeeBurned, rot.Old, rot.New, firstNew, dark.DarkAt+1, dark.ExcludedAt,
		toExclusion, dark.Kind, n.HeightOn(3), before.StartHeight, before.IndexOffset, s+1, after.IndexOffset, s+2,
		s-2, s+rotationWindow, time.Since(begin).Round(time.Second))
	t.Logf("(d) exec0 back at %d (%s), exec3 too", dark.HealthyAt, ln.Short(dark.RestoredBy))
	return rot
}

// checkSigners: CometBFT's sets and commits around the swap, from node 0.
func checkSigners(t *testing.T, n *ln.Net, rot ln.Rotation) {
	t.Helper()
	s := rot.TxHeight
	for h := s - 2; h <= s+rotationWindow; h++ {
		set, err := n.ValidatorSet(0, h)
		if err != nil {
			t.Fatal(err)
		}
		addrs := make([]string, len(set))
		for k, m := range set {
			addrs[k] = m.Addr
		}
		hasOld, hasNew := slices.Contains(addrs, rot.Old), slices.Contains(addrs, rot.New)
		if wantNew := h >= s+2; hasOld == wantNew || hasNew != wantNew {
			t.Errorf("validator set at %d: old key %v, new key %v; the new key signs from %d", h, hasOld, hasNew, s+2)
		}
	}
}

// checkBundles verifies each bundle of the window and returns the first
// height whose committed votes carry the new address.
func checkBundles(t *testing.T, n *ln.Net, rot ln.Rotation, dark *ln.Outage) int64 {
	t.Helper()
	s := rot.TxHeight
	firstNew, firstAttested := int64(0), int64(0)
	for h := s - 2; h <= s+rotationWindow; h++ {
		c, err := n.CheckBundle(h)
		if err != nil {
			t.Errorf("bundle of block %d: %v", h, err)
			continue
		}
		if len(c.Pruned) > 0 {
			t.Errorf("bundle of block %d: the proposer pruned %v's extensions", h, c.Pruned)
		}
		signers, err := n.CommitSigners(h - 1)
		if err != nil {
			t.Fatal(err)
		}
		if firstNew == 0 && slices.Contains(signers, rot.New) {
			firstNew = h - 1
		}
		_, oldCounted := c.Counted[rot.Old]
		_, newCounted := c.Counted[rot.New]
		switch {
		case h == s+2 && !oldCounted:
			t.Errorf("bundle of block %d (votes of %d, the old key's last): validator 3's extension does not count under %s", h, h-1, rot.Old)
		case h == s+3 && !newCounted:
			t.Errorf("bundle of block %d (votes of %d, the new key's first): validator 3's extension does not count under %s", h, h-1, rot.New)
		case h >= s+3 && oldCounted:
			t.Errorf("bundle of block %d: the old address %s still counts", h, rot.Old)
		}
		if firstAttested == 0 && c.Attested[rot.New] {
			firstAttested = h
		}
		// The rotated validator's vote on exec0: node 3's key signed up to
		// S+1 (bundle S+2), node 4's from S+2 (bundle S+3).
		signer := 3
		if h >= s+3 {
			signer = 4
		}
		var moves []string
		for _, e := range n.TransitionEvents(h, dark.Addr) {
			moves = append(moves, ln.Short(e["to"]))
		}
		t.Logf("block %d (votes of %d): valid %d of %d (%s); validator 3 as %s: %s on exec0; exec0: %s; moved %v, cap refusals %v",
			h, h-1, c.ValidPower, c.TotalPower, counted(c, rot), abbrev(n.ValidatorAddr(signer)),
			n.VoteOf(h, signer, dark.Addr), n.BundleLine(h, dark.Addr), moves, n.Events(h, capped))
	}
	if firstNew != s+2 {
		t.Errorf("first commit carrying %s: votes of %d, want %d (S+2)", rot.New, firstNew, s+2)
	}
	if firstAttested == 0 {
		t.Errorf("node 4 never attested (a non-empty extension) in bundles %d..%d: is its health monitor on?", s+3, s+rotationWindow)
	}
	t.Logf("node 4's first non-empty extension: in block %d's bundle (votes of %d)", firstAttested, firstAttested-1)
	return firstNew
}

// capped is the breaker's event for an exclusion its weight cap refused.
var capped = proto.MessageName(&types.EventExclusionCapped{})

func counted(c ln.BundleCheck, rot ln.Rotation) string {
	var out []string
	for addr, p := range c.Counted {
		name := abbrev(addr)
		switch addr {
		case rot.Old:
			name += "(old)"
		case rot.New:
			name += "(new)"
		}
		out = append(out, fmt.Sprintf("%s:%d", name, p))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func abbrev(addr string) string { return addr[:min(6, len(addr))] }

// checkSigningInfo: x/slashing's record under the old address after S+1,
// under the new one after S+2 (moved in EndBlock S+2, with the key), none
// under the old one since.
func checkSigningInfo(t *testing.T, n *ln.Net, rot ln.Rotation) (before, after ln.SigningInfo) {
	t.Helper()
	s := rot.TxHeight
	before, err := n.SigningInfoAt(rot.OldCons, s+1)
	if err != nil {
		t.Fatalf("signing info of %s after %d: %v", rot.OldCons, s+1, err)
	}
	if after, err = n.SigningInfoAt(rot.NewCons, s+2); err != nil {
		t.Fatalf("signing info of %s after %d: %v", rot.NewCons, s+2, err)
	}
	if _, err := n.SigningInfoAt(rot.OldCons, 0); err == nil {
		t.Errorf("%s still has signing info after the rotation", rot.OldCons)
	}
	latest, err := n.SigningInfoAt(rot.NewCons, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.StartHeight != before.StartHeight || ln.Atoi(t, latest.IndexOffset) <= ln.Atoi(t, before.IndexOffset) {
		t.Errorf("signing info: %+v under the old address at %d, %+v under the new at %d, %+v latest; want the same record going on",
			before, s+1, after, s+2, latest)
	}
	return before, after
}
