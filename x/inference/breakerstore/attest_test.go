package breakerstore

import (
	"testing"

	sdk "github.com/cosmos/cosmos-sdk/types"
)

func TestMergeAddresses(t *testing.T) {
	a := func(bs ...byte) []sdk.AccAddress {
		var out []sdk.AccAddress
		for _, b := range bs {
			out = append(out, sdk.AccAddress{b})
		}
		return out
	}
	cases := []struct {
		name       string
		x, y, want []sdk.AccAddress
	}{
		{"both empty", nil, nil, a()},
		{"records only", a(1, 3), nil, a(1, 3)},
		{"queued only", nil, a(2), a(2)},
		{"interleaved", a(1, 4), a(2, 3, 5), a(1, 2, 3, 4, 5)},
		{"an executor in both appears once", a(1, 2, 3), a(2, 3, 4), a(1, 2, 3, 4)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeAddresses(tc.x, tc.y)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if !got[i].Equals(tc.want[i]) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
