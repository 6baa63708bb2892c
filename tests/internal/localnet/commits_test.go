package localnet

import "testing"

// The jailing threshold the lying scenario asserts against is the SDK's:
// min_signed_per_window of the window, rounded.
func TestMinSignedIsTheSDKs(t *testing.T) {
	for _, c := range []struct {
		dec    string
		window int64
		want   int64
	}{
		{"0.500000000000000000", 100, 50}, // the SDK's defaults
		{"0.050000000000000000", 100, 5},
		{"0.005000000000000000", 100, 0}, // 0.5 rounds to even, as in the SDK
		{"0.015000000000000000", 100, 2}, // 1.5 too
		{"1.000000000000000000", 10, 10},
		{"0", 100, 0},
	} {
		got, err := minSigned(c.dec, c.window)
		if err != nil || got != c.want {
			t.Errorf("minSigned(%s, %d) = %d, %v; want %d", c.dec, c.window, got, err, c.want)
		}
	}
	if _, err := minSigned("half", 100); err == nil {
		t.Error("a min_signed_per_window that is no decimal was read")
	}
}
