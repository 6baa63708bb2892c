// Command localnet-keys creates many keys in a test-backend keyring in one
// process and prints each one's address: scripts/localnet.sh uses it so
// that a network of 1,000 executors gets its keys in seconds, where one
// `inferenced keys add` per key takes minutes. It is a test fixture: the
// test backend stores keys unencrypted in all but name.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/cosmos/cosmos-sdk/codec"
	"github.com/cosmos/cosmos-sdk/crypto/hd"
	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	"github.com/cosmos/cosmos-sdk/std"
	sdk "github.com/cosmos/cosmos-sdk/types"

	"github.com/inferenced/inferenced/app/chainconfig"
)

// maxKeys bounds one run.
const maxKeys = 20000

// keyName is what a name may be: what the localnet's key names are.
var keyName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "localnet-keys:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("localnet-keys", flag.ContinueOnError)
	dir := fs.String("keyring-dir", "", "test-backend keyring directory (required)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: localnet-keys -keyring-dir DIR NAME...\n"+
			"Creates each key (secp256k1, a new mnemonic) and prints \"NAME ADDRESS\" per line, in order.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := fs.Args()
	switch {
	case *dir == "":
		return errors.New("-keyring-dir is required")
	case len(names) == 0 || len(names) > maxKeys:
		return fmt.Errorf("want 1..%d key names, got %d", maxKeys, len(names))
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !keyName.MatchString(n) {
			return fmt.Errorf("key name %q: want letters, digits, _ or -, starting with a letter", n)
		}
		if seen[n] {
			return fmt.Errorf("key name %q given twice", n)
		}
		seen[n] = true
	}
	registry, err := chainconfig.NewInterfaceRegistry()
	if err != nil {
		return err
	}
	std.RegisterInterfaces(registry)
	kr, err := keyring.New(sdk.KeyringServiceName(), keyring.BackendTest, *dir, nil, codec.NewProtoCodec(registry))
	if err != nil {
		return fmt.Errorf("open keyring %s: %w", *dir, err)
	}
	out := bufio.NewWriter(stdout)
	for _, n := range names {
		if _, err := kr.Key(n); err == nil {
			return fmt.Errorf("key %q already exists in %s", n, *dir)
		}
		rec, _, err := kr.NewMnemonic(n, keyring.English, sdk.FullFundraiserPath, keyring.DefaultBIP39Passphrase, hd.Secp256k1)
		if err != nil {
			return fmt.Errorf("key %s: %w", n, err)
		}
		addr, err := rec.GetAddress()
		if err != nil {
			return fmt.Errorf("key %s: %w", n, err)
		}
		fmt.Fprintf(out, "%s %s\n", n, addr)
	}
	return out.Flush()
}
