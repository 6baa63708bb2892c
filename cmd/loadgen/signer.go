package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cosmos/cosmos-sdk/client"
	clienttx "github.com/cosmos/cosmos-sdk/client/tx"
	"github.com/cosmos/cosmos-sdk/crypto/keyring"
	sdk "github.com/cosmos/cosmos-sdk/types"
	sdkerrors "github.com/cosmos/cosmos-sdk/types/errors"
	"github.com/cosmos/cosmos-sdk/types/tx/signing"
)

const txGas = 400_000

// account signs and sends transactions for one key, keeping its sequence
// locally so that several transactions fit in one block.
type account struct {
	mu       sync.Mutex
	name     string
	address  string
	number   uint64
	sequence uint64
	synced   bool
}

type signer struct {
	chain   *chain
	txCfg   client.TxConfig
	keyring keyring.Keyring
	chainID string
}

// send signs msg with acc's key and broadcasts it. On a sequence mismatch it
// re-reads the account once and retries.
func (s *signer) send(ctx context.Context, acc *account, msg sdk.Msg) error {
	acc.mu.Lock()
	defer acc.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if !acc.synced {
			number, sequence, err := s.chain.account(ctx, acc.address)
			if err != nil {
				return err
			}
			acc.number, acc.sequence, acc.synced = number, sequence, true
		}
		bz, err := s.sign(ctx, acc, msg)
		if err != nil {
			return err
		}
		code, raw, err := s.chain.broadcast(ctx, bz)
		if err != nil {
			return err
		}
		switch code {
		case 0:
			acc.sequence++
			return nil
		case sdkerrors.ErrWrongSequence.ABCICode():
			acc.synced = false
			continue
		default:
			return fmt.Errorf("checktx code %d: %s", code, strings.TrimSpace(raw))
		}
	}
	return fmt.Errorf("sequence for %s kept changing", acc.name)
}

func (s *signer) sign(ctx context.Context, acc *account, msg sdk.Msg) ([]byte, error) {
	f := clienttx.Factory{}.
		WithTxConfig(s.txCfg).
		WithKeybase(s.keyring).
		WithChainID(s.chainID).
		WithAccountNumber(acc.number).
		WithSequence(acc.sequence).
		WithGas(txGas).
		WithSignMode(signing.SignMode_SIGN_MODE_DIRECT)
	builder, err := f.BuildUnsignedTx(msg)
	if err != nil {
		return nil, fmt.Errorf("build tx: %w", err)
	}
	if err := clienttx.Sign(ctx, f, acc.name, builder, true); err != nil {
		return nil, fmt.Errorf("sign tx with %s: %w", acc.name, err)
	}
	return s.txCfg.TxEncoder()(builder.GetTx())
}

// accountsByAddress lists every key in the keyring by its address.
func accountsByAddress(kr keyring.Keyring) (map[string]*account, error) {
	records, err := kr.List()
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	out := make(map[string]*account, len(records))
	for _, r := range records {
		addr, err := r.GetAddress()
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", r.Name, err)
		}
		out[addr.String()] = &account{name: r.Name, address: addr.String()}
	}
	return out, nil
}
