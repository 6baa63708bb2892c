package types_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/inferenced/inferenced/x/inference/types"
)

func TestValidateInferenceURL(t *testing.T) {
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"http host", "http://node.example", true},
		{"https host port path", "https://node.example:8443/v1/chat", true},
		{"ipv4", "http://10.0.0.1:8080/", true},
		{"ipv6", "http://[::1]:8080/", true},
		{"upper-case scheme", "HTTPS://node.example/", true},
		{"exactly max length", "http://h/" + strings.Repeat("a", types.MaxURLLength-len("http://h/")), true},
		{"empty", "", false},
		{"one byte over max", "http://h/" + strings.Repeat("a", types.MaxURLLength-len("http://h/")+1), false},
		{"ftp scheme", "ftp://node.example/", false},
		{"file scheme", "file:///etc/passwd", false},
		{"javascript scheme", "javascript:alert(1)", false},
		{"no scheme", "node.example:8080", false},
		{"relative path", "/v1/chat", false},
		{"opaque http", "http:node.example", false},
		{"no host", "http:///path", false},
		{"port only", "http://:8080/", false},
		{"user info", "http://user@node.example/", false},
		{"user and password", "https://user:secret@node.example/", false},
		{"empty user info", "http://@node.example/", false},
		{"query", "http://node.example/?key=secret", false},
		{"fragment", "http://node.example/#x", false},
		{"empty query", "http://node.example/?", false},
		{"empty fragment", "http://node.example/#", false},
		{"space in host", "http://node example/", false},
		{"control char", "http://node.example/\x00", false},
		{"newline", "http://node.example/\nX-Injected: 1", false},
		{"bad percent escape", "http://node.example/%zz", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := types.ValidateInferenceURL(tc.in)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

func TestNormalizeModels(t *testing.T) {
	tooMany := make([]string, types.MaxModels+1)
	for i := range tooMany {
		tooMany[i] = "m" + strings.Repeat("x", i)
	}
	cases := []struct {
		name string
		in   []string
		want []string // nil means an error
	}{
		{"single", []string{"llama"}, []string{"llama"}},
		{"sorted by bytes", []string{"b", "a", "C", "a1"}, []string{"C", "a", "a1", "b"}},
		{"all allowed punctuation", []string{"org/model-7b_v1.0:q4"}, []string{"org/model-7b_v1.0:q4"}},
		{"max models", tooMany[:types.MaxModels], slices.Sorted(slices.Values(tooMany[:types.MaxModels]))},
		{"max length", []string{strings.Repeat("m", types.MaxModelLength)}, []string{strings.Repeat("m", types.MaxModelLength)}},
		{"nil", nil, nil},
		{"empty list", []string{}, nil},
		{"too many", tooMany, nil},
		{"duplicate", []string{"a", "b", "a"}, nil},
		{"empty name", []string{"a", ""}, nil},
		{"too long", []string{strings.Repeat("m", types.MaxModelLength+1)}, nil},
		{"space", []string{"llama 3"}, nil},
		{"comma", []string{"a,b"}, nil},
		{"non-ascii", []string{"llamá"}, nil},
		{"nul byte", []string{"a\x00"}, nil},
		{"backslash", []string{`a\b`}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			got, err := types.NormalizeModels(in)
			if tc.want == nil {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.in, in, "the caller's slice is not reordered")
		})
	}
}

func TestValidateInferenceID(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"a", true},
		{"req-123_abc.def:9", true},
		{strings.Repeat("i", types.MaxInferenceIDLength), true},
		{"", false},
		{strings.Repeat("i", types.MaxInferenceIDLength+1), false},
		{"a/b", false},
		{"../x", false},
		{"a b", false},
		{"a\nb", false},
		{"é", false},
		{"a\x00", false},
	}
	for _, tc := range cases {
		err := types.ValidateInferenceID(tc.in)
		require.Equal(t, tc.ok, err == nil, "id %q: %v", tc.in, err)
	}
}

func TestValidateHash(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"", true},
		{"deadbeef", true},
		{"aGVsbG8gd29ybGQ=", true},
		{"a+b/c=_-", true},
		{strings.Repeat("f", types.MaxHashLength), true},
		{strings.Repeat("f", types.MaxHashLength+1), false},
		{"a b", false},
		{"sha256:abc", false},
		{"<script>", false},
		{"\x00", false},
	}
	for _, tc := range cases {
		err := types.ValidateHash("prompt_hash", tc.in)
		require.Equal(t, tc.ok, err == nil, "hash %q: %v", tc.in, err)
		if err != nil {
			require.Contains(t, err.Error(), "prompt_hash", "the error names the field")
		}
	}
}

func TestValidateWeight(t *testing.T) {
	require.NoError(t, types.ValidateWeight(0))
	require.NoError(t, types.ValidateWeight(types.MaxParticipantWeight))
	require.Error(t, types.ValidateWeight(types.MaxParticipantWeight+1))
	require.Error(t, types.ValidateWeight(^uint64(0)))
}

// FuzzValidators feeds arbitrary strings to every validator: none may panic,
// and whatever they accept must honour the documented rules.
func FuzzValidators(f *testing.F) {
	for _, seed := range []string{"", "llama", "b,a", "a,a", "http://h/", "https://u:p@h/?q#f", "\x00", "é", strings.Repeat("z", 300)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if types.ValidateInferenceURL(s) == nil {
			u, err := url.Parse(s)
			if err != nil || len(s) > types.MaxURLLength || (u.Scheme != "http" && u.Scheme != "https") ||
				u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				t.Fatalf("accepted bad url %q", s)
			}
		}
		if types.ValidateInferenceID(s) == nil && (s == "" || len(s) > types.MaxInferenceIDLength || strings.ContainsAny(s, " /\n")) {
			t.Fatalf("accepted bad id %q", s)
		}
		if types.ValidateHash("h", s) == nil && len(s) > types.MaxHashLength {
			t.Fatalf("accepted long hash %q", s)
		}
		in := strings.Split(s, ",")
		before := slices.Clone(in)
		out, err := types.NormalizeModels(in)
		if !slices.Equal(in, before) {
			t.Fatalf("NormalizeModels reordered its input")
		}
		if err != nil {
			return
		}
		if len(out) != len(in) || len(out) > types.MaxModels || !slices.IsSorted(out) {
			t.Fatalf("NormalizeModels(%q) = %q", in, out)
		}
		for i, m := range out {
			if types.ValidateModel(m) != nil || (i > 0 && out[i-1] == m) {
				t.Fatalf("NormalizeModels(%q) kept %q", in, m)
			}
		}
		again, err := types.NormalizeModels(out)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("NormalizeModels is not idempotent on %q", out)
		}
	})
}
