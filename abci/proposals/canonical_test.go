package proposals

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

// agreesWithGogo checks readBundle against the codec's path on one body:
// the same message or the same error, and the hand reader takes exactly
// the bodies the codec accepts as canonical.
func agreesWithGogo(t testing.TB, body []byte) {
	t.Helper()
	want, wantErr := readGogo(body)
	got, err := readBundle(body)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("body %x: error %v, the codec's %v", body, err, wantErr)
	}
	if !equalBundles(got, want) {
		t.Fatalf("body %x: read %+v, the codec %+v", body, got, want)
	}
	if _, fast := readCanonical(body); fast != (wantErr == nil) {
		t.Fatalf("body %x: hand reader takes it %v, the codec accepts it %v", body, fast, wantErr == nil)
	}
}

func equalBundles(a, b types.HealthBundle) bool {
	return a.EpochIndex == b.EpochIndex && a.Members == b.Members && bytes.Equal(a.Samples, b.Samples) &&
		bytes.Equal(a.Extensions, b.Extensions) && bytes.Equal(a.Signatures, b.Signatures) && bytes.Equal(a.Service, b.Service)
}

// bundleBodies is the message bodies of the sample and empty bundles.
func bundleBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, layout := range layouts {
		prefix, _ := prefixOf(layout)
		good, err := Encode(sampleBundle(t, layout))
		require.NoError(t, err)
		out = append(out, good[len(prefix):], emptyBundle(layout)[len(prefix):])
	}
	return out
}

// TestReadCanonicalAgreesWithGogo: the attacks a proposer could try on
// the hand reader, each refused (or read) exactly as the codec's
// decode-and-re-encode check does: a non-minimal varint key, length or
// value (malleability: a second encoding of the same bundle), a zero or
// empty field written out, fields out of order or repeated (one of two
// values silently dropped), a wrong wire type, an unknown or reserved
// field (smuggled bytes), members past uint32 (truncation), a length past
// the body (out-of-bounds read), a truncated body, and random mutations of
// real bundles.
func TestReadCanonicalAgreesWithGogo(t *testing.T) {
	cases := [][]byte{
		{},
		{0x10, 0x05},                         // epoch 5
		{0x10, 0x85, 0x00},                   // non-minimal value
		{0x90, 0x00, 0x05},                   // non-minimal key
		{0x10, 0x00},                         // zero written out
		{0x1a, 0x00},                         // empty bytes written out
		{0x1a, 0x81, 0x00, 0x01},             // non-minimal length
		{0x20, 0x01, 0x10, 0x01},             // out of order
		{0x10, 0x01, 0x10, 0x02},             // repeated
		{0x12, 0x01, 0x01},                   // epoch with wire type 2
		{0x1a, 0x01},                         // length past the body
		{0x08, 0x01},                         // field 1
		{0x42, 0x01, 0x00},                   // unknown field 8
		{0x20, 0x80, 0x80, 0x80, 0x80, 0x10}, // members 2^32
		{0x20, 0xff, 0xff, 0xff, 0xff, 0x0f}, // members MaxUint32
		{0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, // overflow
		{0x10}, // truncated
		{0x1a, 0x02, 0xaa, 0xbb, 0x20, 0x07, 0x2a, 0x01, 0x01, 0x32, 0x01, 0x02, 0x3a, 0x01, 0x03},
	}
	cases = append(cases, bundleBodies(t)...)
	for _, body := range cases {
		agreesWithGogo(t, body)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, body := range bundleBodies(t) {
		for range 2000 {
			bz := bytes.Clone(body)
			if len(bz) > 0 {
				for range 1 + r.IntN(3) {
					bz[r.IntN(len(bz))] = byte(r.Uint32())
				}
				bz = bz[:r.IntN(len(bz)+1)]
			}
			agreesWithGogo(t, bz)
		}
	}
}

// TestReadCanonicalKeepsNothingOfTx: the bundle's fields are copies, each
// capped at its length, so neither a later write to the transaction nor an
// append to one field changes another (aliasing).
func TestReadCanonicalKeepsNothingOfTx(t *testing.T) {
	body := []byte{0x1a, 0x01, 0xaa, 0x3a, 0x01, 0xbb}
	hb, ok := readCanonical(body)
	require.True(t, ok)
	body[2], body[5] = 0, 0
	require.Equal(t, []byte{0xaa}, hb.Samples)
	_ = append(hb.Samples, 0xcc)
	require.Equal(t, []byte{0xbb}, hb.Service)
}

// FuzzReadCanonicalAgrees: on any body, the hand reader and the codec's
// decode-and-re-encode path give the same message or the same error.
func FuzzReadCanonicalAgrees(f *testing.F) {
	for _, body := range bundleBodies(f) {
		f.Add(body)
	}
	f.Add([]byte{0x10, 0x85, 0x00})
	f.Add([]byte{0x20, 0x80, 0x80, 0x80, 0x80, 0x10})
	f.Fuzz(func(t *testing.T, body []byte) { agreesWithGogo(t, body) })
}
