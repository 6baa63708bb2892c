package testkit

import (
	"bytes"

	addresscodec "github.com/cosmos/cosmos-sdk/codec/address"
	sdk "github.com/cosmos/cosmos-sdk/types"
)

// AddressCodec is the chain's account address codec (bech32 "infer").
var AddressCodec = addresscodec.NewBech32Codec("infer")

// Addr is the fixed 20-byte test address i…i.
func Addr(i byte) sdk.AccAddress { return bytes.Repeat([]byte{i}, 20) }

// Bech is Addr(i) in the chain's bech32 spelling.
func Bech(i byte) string {
	s, err := AddressCodec.BytesToString(Addr(i))
	if err != nil {
		panic(err) // a 20-byte address always encodes
	}
	return s
}

// Feed sends one inference per sample of pattern, each applied before the
// next starts: send(ok) starts one (and finishes it in its block when ok),
// next ends the block and begins the following one; an 'm' (never
// finished) expires one block later, so it takes two.
func Feed(pattern string, send func(ok bool), next func()) {
	for _, c := range pattern {
		send(c == 'o')
		next()
		if c == 'm' {
			next()
		}
	}
}
