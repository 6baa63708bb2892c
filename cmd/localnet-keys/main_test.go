package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	"github.com/cosmos/cosmos-sdk/std"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/app"
)

// The keys land in the test keyring the CLI and the load driver open, each
// at the address printed for it, in the order given.
func TestCreatesKeysAndPrintsAddresses(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-keyring-dir", dir, "val0", "exec0", "exec1"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q, want 3 lines", out.String())
	}
	registry, err := app.NewInterfaceRegistry()
	if err != nil {
		t.Fatal(err)
	}
	std.RegisterInterfaces(registry)
	kr, err := keyring.New(sdk.KeyringServiceName(), keyring.BackendTest, dir, nil, codec.NewProtoCodec(registry))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for k, want := range []string{"val0", "exec0", "exec1"} {
		name, addr, _ := strings.Cut(lines[k], " ")
		if name != want || !strings.HasPrefix(addr, app.AccountAddressPrefix+"1") || seen[addr] {
			t.Fatalf("line %d %q: want %s and a new %s1... address", k, lines[k], want, app.AccountAddressPrefix)
		}
		seen[addr] = true
		rec, err := kr.Key(name)
		if err != nil {
			t.Fatalf("key %s not in the keyring: %v", name, err)
		}
		if a, _ := rec.GetAddress(); a.String() != addr {
			t.Fatalf("key %s at %s, printed %s", name, a, addr)
		}
	}
	// A key that exists is refused, not replaced.
	if err := run([]string{"-keyring-dir", dir, "exec1"}, &out); err == nil {
		t.Fatal("an existing key was created again")
	}
}

func TestRejectsBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"exec0"},                          // no keyring
		{"-keyring-dir", dir},              // no names
		{"-keyring-dir", dir, "a", "a"},    // a name twice
		{"-keyring-dir", dir, "0exec"},     // not starting with a letter
		{"-keyring-dir", dir, "../escape"}, // a path, not a name
		{"-keyring-dir", dir, strings.Repeat("a", 65)},
	} {
		if err := run(args, &bytes.Buffer{}); err == nil {
			t.Errorf("run %q accepted", args)
		}
	}
}
