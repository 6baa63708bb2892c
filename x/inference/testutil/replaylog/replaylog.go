// Package replaylog records what a test run does to the module's state,
// block by block, so that two builds of the code can be shown to behave
// the same: per block, a digest of the store under each prefix and the
// events in the order they were emitted; per transaction, its gas and
// outcome. It writes only when INFERENCE_REPLAY_LOG names a directory
// (one file per test, named after it); otherwise every method is a no-op.
//
// Compare two runs with diff: the same lines mean the same store contents
// after every block, the same events, and the same gas for every
// transaction (gas is part of the block's results hash).
package replaylog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	storetypes "github.com/cosmos/cosmos-sdk/store/v2/types"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

// EnvDir names the directory the logs are written to.
const EnvDir = "INFERENCE_REPLAY_LOG"

// Log is one test's record; a nil Log records nothing.
type Log struct {
	f *os.File
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Open starts the log of tb when EnvDir is set; it is closed when tb ends.
func Open(tb testing.TB) *Log {
	tb.Helper()
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("replay log: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, unsafeName.ReplaceAllString(tb.Name(), "_")+".log"))
	if err != nil {
		tb.Fatalf("replay log: %v", err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	return &Log{f: f}
}

func (l *Log) line(format string, args ...any) {
	if l == nil {
		return
	}
	_, _ = fmt.Fprintf(l.f, format+"\n", args...)
}

// Tx runs one transaction's call and records its gas and outcome.
func (l *Log) Tx(ctx sdk.Context, what string, call func() error) error {
	before := ctx.GasMeter().GasConsumed()
	err := call()
	if l != nil {
		outcome := "ok"
		if err != nil {
			outcome = "err " + err.Error()
		}
		l.line("tx %s gas %d %s", what, ctx.GasMeter().GasConsumed()-before, outcome)
	}
	return err
}

// Note records a line of the test's own (a query answer, say).
func (l *Log) Note(format string, args ...any) { l.line("note "+format, args...) }

// Block records the end of the block at height: the events ctx's event
// manager holds, in order, and a digest of store per key prefix (first
// byte), read without gas.
func (l *Log) Block(ctx sdk.Context, height int64, key storetypes.StoreKey) {
	if l == nil {
		return
	}
	l.line("block %d", height)
	for _, ev := range ctx.EventManager().ABCIEvents() {
		attrs := make([]string, len(ev.Attributes))
		for i, a := range ev.Attributes {
			attrs[i] = a.Key + "=" + a.Value
		}
		l.line("  event %s %s", ev.Type, strings.Join(attrs, " "))
	}
	l.line("  store %s", Digest(ctx.MultiStore().GetKVStore(key)))
}

// Digest is a digest of every key and value in store, one per first key
// byte, in key order: "prefix:count:sha256[:8]" joined by spaces.
func Digest(store storetypes.KVStore) string {
	it := store.Iterator(nil, nil)
	defer func() { _ = it.Close() }() // a read-only walk of an in-memory store: nothing to lose
	type part struct {
		prefix byte
		count  int
		h      []byte
	}
	var parts []part
	cur := sha256.New()
	n := 0
	var prefix byte
	flush := func() {
		if n > 0 {
			parts = append(parts, part{prefix, n, cur.Sum(nil)})
		}
		cur.Reset()
		n = 0
	}
	for ; it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		if n > 0 && k[0] != prefix {
			flush()
		}
		prefix = k[0]
		_, _ = fmt.Fprintf(cur, "%x=%x;", k, v)
		n++
	}
	flush()
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf("%d:%d:%s", p.prefix, p.count, hex.EncodeToString(p.h[:8]))
	}
	return strings.Join(slices.Clip(out), " ")
}

// StoreKey finds the store key named name in a root multistore.
func StoreKey(tb testing.TB, ms storetypes.MultiStore, name string) storetypes.StoreKey {
	tb.Helper()
	byName, ok := ms.(interface {
		StoreKeysByName() map[string]storetypes.StoreKey
	})
	if !ok {
		tb.Fatalf("replay log: %T does not list its store keys", ms)
	}
	key := byName.StoreKeysByName()[name]
	if key == nil {
		tb.Fatalf("replay log: no store %q", name)
	}
	return key
}
