package ve

import (
	"bytes"
	"context"
	"errors"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"cosmossdk.io/log/v2"

	"github.com/inferenced/inferenced/x/inference/service"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

func TestCheckerReturnsTheVerdicts(t *testing.T) {
	c := NewChecker(context.Background(), fixedGroup{epoch: 3, n: 2}, 10)
	if epoch, n, err := c.Group(); epoch != 3 || n != 2 || err != nil {
		t.Fatalf("group %d %d %v", epoch, n, err)
	}
	e := ext(t, 3, verdict.Miss, verdict.OK)
	bz, _ := Encode(e, 2)
	got, abstains, err := c.Verdicts(bz)
	if want, _ := verdict.Compact(e.Verdicts, 2); err != nil || abstains || !bytes.Equal(got, want) {
		t.Fatalf("verdicts %x %v %v, want %x", got, abstains, err, want)
	}
	if got, abstains, err := c.Verdicts(nil); got != nil || !abstains || err != nil {
		t.Fatalf("abstention: %x %v %v", got, abstains, err)
	}
	// An all-ok extension is not an abstention, though its verdicts are empty.
	allOK, _ := encodeVerdicts(t, 3, verdict.OK, verdict.OK, verdict.OK, verdict.OK, verdict.OK)
	c5 := NewChecker(context.Background(), fixedGroup{epoch: 3, n: 5}, 10)
	if got, abstains, err := c5.Verdicts(allOK); len(got) != 0 || abstains || err != nil {
		t.Fatalf("all ok: %x %v %v", got, abstains, err)
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
	if got, abstains, err := c.Verdicts([]byte{}); got != nil || !abstains || err != nil {
		t.Fatalf("abstention: %x %v %v", got, abstains, err)
	}
	good, _ := encodeVerdicts(t, 3, verdict.OK)
	if _, _, err := c.Verdicts(good); !errors.Is(err, store) {
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
	good, _ := encodeVerdicts(t, 3, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK)
	other, _ := encodeVerdicts(t, 2, verdict.OK, verdict.OK, verdict.Miss, verdict.Unknown, verdict.OK)
	short, _ := encodeVerdicts(t, 3, verdict.OK)
	for _, bz := range [][]byte{nil, good, other, short, {0xde, 0xad}, append(append([]byte{}, good...), 0x18, 0x01)} {
		_, _, err := c.Verdicts(bz)
		want := abci.ResponseVerifyVoteExtension_ACCEPT
		if err != nil {
			want = abci.ResponseVerifyVoteExtension_REJECT
		}
		if got := verify(h, bz); got != want {
			t.Errorf("%x: VerifyVoteExtension %s, checker %v", bz, got, err)
		}
	}
}

// TestCheckerDecodesServiceForTheMedian: the checker returns each accepted
// extension's service reports decoded (Verdicts, VerifyVoteExtension's
// check, decodes nothing and does not allocate), and the median of the commit from
// those decodings is the median from the lists, byte for byte; an
// extension it refuses (a Byzantine validator's: a rate above 100%, an
// index past the group, the wrong epoch after a valid list) gives no
// decoding to tally.
func TestCheckerDecodesServiceForTheMedian(t *testing.T) {
	const n = 300
	c := NewChecker(context.Background(), fixedGroup{epoch: 3, n: n}, 10)
	var votes, plain []service.Vote
	var total uint64
	var good []byte
	for v := range 20 {
		rates := make([]service.Report, n)
		for e := range rates {
			rates[e] = service.Report((e*7 + v*13) % 40)
			if (e+v)%17 == 0 {
				rates[e] = service.Unknown
			}
		}
		svc, err := service.Attest(rates, ServiceFloor)
		if err != nil {
			t.Fatal(err)
		}
		e := ext(t, 3, make([]verdict.Verdict, n)...)
		e.Service = svc
		bz, err := Encode(e, n)
		if err != nil {
			t.Fatal(err)
		}
		checked, err := c.Check(bz)
		if err != nil {
			t.Fatal(err)
		}
		good = bz
		power := int64(10 + v)
		total += uint64(power)
		votes = append(votes, service.Vote{Power: power, Reports: checked.Service, Checked: checked.Reports})
		plain = append(plain, service.Vote{Power: power, Reports: checked.Service})
	}
	got, err := service.Encoded(votes, total, n)
	want, wantErr := service.Encoded(plain, total, n)
	if err != nil || wantErr != nil || !bytes.Equal(got, want) {
		t.Fatalf("median from decodings %x (%v), from lists %x (%v)", got, err, want, wantErr)
	}
	// VerifyVoteExtension's check (Verdicts) decodes nothing: no allocation.
	if allocs := testing.AllocsPerRun(50, func() { _, _, _ = c.Verdicts(good) }); allocs != 0 {
		t.Errorf("Verdicts allocates %.0f times", allocs)
	}
	e := ext(t, 3, make([]verdict.Verdict, n)...)
	for name, svc := range map[string][]byte{"rate above 100%": {0, 0, 101}, "index past the group": {0, 0xfe, 0x7f, 5}} {
		e.Service = svc
		bz, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if checked, err := c.Check(bz); err == nil || checked.Reports.Decodes(svc, n) {
			t.Errorf("%s: accepted (%v) or decoded", name, err)
		}
	}
	e.Service, e.EpochIndex = []byte{0, 0, 50}, 4
	bz, _ := Encode(e, n)
	if checked, err := c.Check(bz); !errors.Is(err, ErrWrongEpoch) || checked.Reports.Decodes(checked.Service, n) {
		t.Errorf("wrong epoch after a valid list: %v, or decoded", err)
	}
}
