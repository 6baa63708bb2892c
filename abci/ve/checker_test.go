package ve

import (
	"bytes"
	"context"
	"errors"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

func TestCheckerReturnsTheVerdicts(t *testing.T) {
	c := NewChecker(context.Background(), fixedGroup{epoch: 3, n: 2}, 10)
	if epoch, n, err := c.Group(); epoch != 3 || n != 2 || err != nil {
		t.Fatalf("group %d %d %v", epoch, n, err)
	}
	e := ext(t, 3, verdict.Miss, verdict.OK)
	bz, _ := Encode(e)
	got, err := c.Verdicts(bz)
	if err != nil || !bytes.Equal(got, e.Verdicts) {
		t.Fatalf("verdicts %x %v, want %x", got, err, e.Verdicts)
	}
	if got, err := c.Verdicts(nil); got != nil || err != nil {
		t.Fatalf("abstention: %x %v", got, err)
	}
}

// An abstention verifies even when the group cannot be read; any other
// extension then fails with the reason.
func TestCheckerWithoutAGroup(t *testing.T) {
	store := errors.New("store")
	c := NewChecker(context.Background(), fixedGroup{err: store}, 10)
	if _, _, err := c.Group(); !errors.Is(err, store) {
		t.Fatalf("group error %v", err)
	}
	if got, err := c.Verdicts([]byte{}); got != nil || err != nil {
		t.Fatalf("abstention: %x %v", got, err)
	}
	good, _ := Encode(ext(t, 3, verdict.OK))
	if _, err := c.Verdicts(good); !errors.Is(err, store) {
		t.Fatalf("extension without a group: %v", err)
	}
	h := NewHandler(fixedGroup{err: store}, nil, log.NewNopLogger())
	if got := verify(h, nil); got != abci.ResponseVerifyVoteExtension_ACCEPT {
		t.Fatalf("VerifyVoteExtension of an abstention without a group: %s", got)
	}
}

// VerifyVoteExtension accepts exactly what the checker accepts.
func TestCheckerAgreesWithVerifyVoteExtension(t *testing.T) {
	g := fixedGroup{epoch: 3, n: 5}
	h := NewHandler(g, nil, log.NewNopLogger())
	c := NewChecker(context.Background(), g, 10)
	good, _ := Encode(ext(t, 3, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK))
	other, _ := Encode(ext(t, 2, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK))
	short, _ := Encode(ext(t, 3, verdict.OK))
	for _, bz := range [][]byte{nil, good, other, short, {0xde, 0xad}, append(append([]byte{}, good...), 0x18, 0x01)} {
		_, err := c.Verdicts(bz)
		want := abci.ResponseVerifyVoteExtension_ACCEPT
		if err != nil {
			want = abci.ResponseVerifyVoteExtension_REJECT
		}
		if got := verify(h, bz); got != want {
			t.Errorf("%x: VerifyVoteExtension %s, checker %v", bz, got, err)
		}
	}
}
