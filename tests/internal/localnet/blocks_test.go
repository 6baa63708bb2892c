package localnet

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestSameAsNode0FindsTheFirstDifference(t *testing.T) {
	n := &Net{t: t}
	hashes := map[int]map[int64]string{
		0: {1: "a", 2: "b", 3: "c"},
		1: {1: "a", 2: "b", 3: "c"},
		2: {1: "a", 2: "x", 3: "c"},
	}
	read := func(i int, h int64) (string, error) {
		if v, ok := hashes[i][h]; ok {
			return v, nil
		}
		return "", errors.New("no block")
	}
	if err := n.sameAsNode0("app hash", 1, 3, []int{1}, read); err != nil {
		t.Fatalf("equal nodes: %v", err)
	}
	err := n.sameAsNode0("app hash", 1, 3, []int{1, 2}, read)
	if err == nil || !strings.Contains(err.Error(), "block 2: node 2 app hash x") {
		t.Fatalf("differing node 2 at block 2: %v", err)
	}
	err = n.sameAsNode0("app hash", 1, 4, []int{1}, read)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("block %d on node 0", 4)) {
		t.Fatalf("a block node 0 lacks: %v", err)
	}
}
