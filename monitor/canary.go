package monitor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxCanaryBody bounds what is read of a canary's answer; a longer one
// does not parse and is a miss.
const maxCanaryBody = 64 << 10

// inferencePath is where clients send inferences, after the participant's
// inference URL (cmd/loadgen callExecutor).
const inferencePath = "/v1/inference"

// canarySender sends canary inferences: requests an executor cannot tell
// from a client's by their content. Same method, path, headers and body
// shape as a client's (POST <inference_url>/v1/inference, Content-Type
// application/json, {"inference_id","model","prompt"} with the keys in
// json.Marshal's order), a fresh random id, a prompt of a realistic size,
// and the client's transport defaults (Go's User-Agent, Accept-Encoding
// gzip). The URL rules are the prober's: no proxy, no redirects followed,
// dial-time refusal of internal addresses unless allowed, bounded time and
// read.
type canarySender struct {
	client *http.Client
}

func newCanarySender(cfg Config) *canarySender {
	// Connections are kept through a burst (canaries a suspect interval
	// apart) and closed between background canaries, so the pool holds
	// about members x idle / canary-interval of them (canaryIdle).
	transport := newTransport(cfg.CanaryTimeout, canaryIdle(cfg), cfg.AllowPrivate)
	return &canarySender{client: &http.Client{Transport: transport, Timeout: cfg.CanaryTimeout, CheckRedirect: noRedirects}}
}

// canaryIdle is how long a canary connection is kept idle: past the
// longest gap of a burst (the suspect interval + 25%).
func canaryIdle(cfg Config) time.Duration { return 2 * cfg.CanarySuspectInterval }

// inferenceURL is the inference endpoint of an executor's inference URL,
// as clients build it (the URL without a trailing slash, then
// /v1/inference), from its scheme, host and path only: no user info,
// query or fragment.
func inferenceURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("unusable inference url %q", raw)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimRight(u.Path, "/") + inferencePath}).String(), nil
}

// newCanaryID is a fresh inference id: 16 random bytes in hex, never
// reused, with nothing marking it as a canary.
func newCanaryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// canaryBody is the request body of a canary, as clients marshal theirs.
func canaryBody(id, model string) []byte {
	body, _ := json.Marshal(map[string]string{"inference_id": id, "model": model, "prompt": canaryPrompt()})
	return body
}

// send sends one canary asking model of the executor at inferenceURL and
// reports whether it was answered: status 200 and a JSON body whose
// inference_id is the canary's. Anything else is a miss, with the reason.
func (c *canarySender) send(ctx context.Context, rawURL, model string) (bool, error) {
	target, err := inferenceURL(rawURL)
	if err != nil {
		return false, err
	}
	id := newCanaryID()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(canaryBody(id, model)))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.client.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxCanaryBody))
	if err != nil {
		return false, err
	}
	if res.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %s", res.Status)
	}
	var reply struct {
		InferenceID string `json:"inference_id"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return false, fmt.Errorf("answer: %w", err)
	}
	if reply.InferenceID != id {
		return false, errors.New("answer for another inference id")
	}
	return true, nil
}
