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

// refusal is a transaction the chain refused, at CheckTx or when its block
// executed it: Reason is the chain's error text.
type refusal struct {
	Code   uint32
	Reason string
}

func (r *refusal) Error() string { return fmt.Sprintf("code %d: %s", r.Code, r.Reason) }

// newRefusal keeps the chain's error text, without the SDK's prefix that
// every failed message shares.
func newRefusal(code uint32, rawLog string) *refusal {
	reason := strings.TrimSpace(rawLog)
	reason = strings.TrimPrefix(reason, "failed to execute message; message index: 0: ")
	return &refusal{Code: code, Reason: reason}
}

// send signs msg with acc's key and broadcasts it, returning the tx hash
// once CheckTx accepted it, or a *refusal with the chain's error text. On a
// sequence mismatch it re-reads the account once and retries. Callers on
// several goroutines may share an account: its lock orders the sequence.
func (s *signer) send(ctx context.Context, acc *account, msg sdk.Msg) (string, error) {
	acc.mu.Lock()
	defer acc.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if !acc.synced {
			number, sequence, err := s.chain.account(ctx, acc.address)
			if err != nil {
				return "", err
			}
			acc.number, acc.sequence, acc.synced = number, sequence, true
		}
		bz, err := s.sign(ctx, acc, msg)
		if err != nil {
			return "", err
		}
		code, hash, raw, err := s.chain.broadcast(ctx, bz)
		if err != nil {
			return "", err
		}
		switch code {
		case 0:
			acc.sequence++
			return hash, nil
		case sdkerrors.ErrWrongSequence.ABCICode():
			acc.synced = false
			continue
		default:
			return "", newRefusal(code, raw)
		}
	}
	return "", fmt.Errorf("sequence for %s kept changing", acc.name)
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
