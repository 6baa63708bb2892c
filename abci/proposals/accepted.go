package proposals

import (
	"bytes"
	"sync"
)

// Accepted is a node's memory of the health bundle of the last proposal it
// accepted, so that the pre-blocker of the block decided on it reads the
// bundle without decoding it again: each node decodes a block's bundle
// once.
//
// Reuse is safe for every node, including one that did not process the
// proposal: a bundle is reused only for exactly the bytes it was decoded
// from, and Decode is a pure function of the bytes (no state, no params),
// so the reused value is what decoding would give. A node that block-syncs
// or replays a block, restarted since, or decided on another round's
// proposal than the one it accepted last, finds different bytes (or none)
// and decodes (TestAcceptedIsReusedOnlyForTheSameBytes).
type Accepted struct {
	mu sync.Mutex
	tx []byte // the accepted proposal's tx[0], copied
	b  Bundle
}

// NewAccepted is an empty memory.
func NewAccepted() *Accepted { return &Accepted{} }

// remember keeps the bundle decoded from tx, a proposal this node accepts.
func (a *Accepted) remember(tx []byte, b Bundle) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tx, a.b = bytes.Clone(tx), b
}

// Find is Find(txs) for a decided block: the bundle this node accepted
// last when txs[0] is exactly its bytes (reused), else decoded now.
func (a *Accepted) Find(txs [][]byte) (b Bundle, found, reused bool, err error) {
	if len(txs) == 0 || !IsBundle(txs[0]) {
		return Bundle{}, false, false, nil
	}
	a.mu.Lock()
	same := a.tx != nil && bytes.Equal(a.tx, txs[0])
	b = a.b
	a.mu.Unlock()
	if same {
		return b, true, true, nil
	}
	b, found, err = Find(txs)
	return b, found, false, err
}
