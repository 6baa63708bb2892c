package types

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Bounds on user-supplied fields: every transaction input is bounded.
const (
	MaxURLLength         = 256
	MaxModels            = 16
	MaxModelLength       = 128
	MaxInferenceIDLength = 128
	MaxHashLength        = 128
	// MaxParticipantWeight keeps any realistic sum of weights far from
	// uint64 overflow (2^40 x 2^20 members < 2^64).
	MaxParticipantWeight uint64 = 1 << 40
)

// ValidateInferenceURL accepts absolute http(s) URLs with a host and no
// credentials, query or fragment.
func ValidateInferenceURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("inference_url is required")
	}
	if len(raw) > MaxURLLength {
		return fmt.Errorf("inference_url longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("inference_url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("inference_url scheme must be http or https, got %q", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("inference_url has no host")
	}
	if u.User != nil || strings.ContainsAny(raw, "?#") {
		return fmt.Errorf("inference_url must not carry credentials, a query or a fragment")
	}
	return nil
}

// NormalizeModels validates the model list and returns it sorted.
func NormalizeModels(models []string) ([]string, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("at least one model is required")
	}
	if len(models) > MaxModels {
		return nil, fmt.Errorf("at most %d models, got %d", MaxModels, len(models))
	}
	out := append([]string(nil), models...)
	sort.Strings(out)
	for i, m := range out {
		if err := ValidateModel(m); err != nil {
			return nil, err
		}
		if i > 0 && out[i-1] == m {
			return nil, fmt.Errorf("model %q listed twice", m)
		}
	}
	return out, nil
}

// ValidateModel accepts 1..128 bytes of [A-Za-z0-9._:/-].
func ValidateModel(m string) error {
	if m == "" || len(m) > MaxModelLength {
		return fmt.Errorf("model name must be 1..%d bytes, got %d", MaxModelLength, len(m))
	}
	if !isToken(m, "._:/-") {
		return fmt.Errorf("model name %q may only hold letters, digits and . _ : / -", m)
	}
	return nil
}

// ValidateWeight bounds the lottery weight.
func ValidateWeight(w uint64) error {
	if w > MaxParticipantWeight {
		return fmt.Errorf("weight must be <= %d, got %d", MaxParticipantWeight, w)
	}
	return nil
}

// ValidateInferenceID accepts 1..128 bytes of [A-Za-z0-9._:-].
func ValidateInferenceID(id string) error {
	if id == "" || len(id) > MaxInferenceIDLength {
		return fmt.Errorf("inference_id must be 1..%d bytes, got %d", MaxInferenceIDLength, len(id))
	}
	if !isToken(id, "._:-") {
		return fmt.Errorf("inference_id %q may only hold letters, digits and . _ : -", id)
	}
	return nil
}

// ValidateHash accepts an empty or hex/base64-like hash of bounded length.
func ValidateHash(field, h string) error {
	if len(h) > MaxHashLength {
		return fmt.Errorf("%s longer than %d bytes", field, MaxHashLength)
	}
	if h != "" && !isToken(h, "+/=_-") {
		return fmt.Errorf("%s may only hold letters, digits and + / = _ -", field)
	}
	return nil
}

func isToken(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case containsByte(extra, c):
		default:
			return false
		}
	}
	return true
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// CanonicalAddress decodes a bech32 account address and requires its
// canonical (lower-case) spelling: state keys and lookups by string must
// agree, and bech32 also decodes an upper-case spelling of the same bytes.
func CanonicalAddress(ac interface {
	StringToBytes(string) ([]byte, error)
	BytesToString([]byte) (string, error)
}, s string) ([]byte, error) {
	bz, err := ac.StringToBytes(s)
	if err != nil {
		return nil, err
	}
	canonical, err := ac.BytesToString(bz)
	if err != nil {
		return nil, err
	}
	if canonical != s {
		return nil, fmt.Errorf("address %q is not in canonical form %q", s, canonical)
	}
	return bz, nil
}
