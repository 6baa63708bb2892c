package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// seen is one request as an executor received it.
type seen struct {
	method, path, query string
	headers             map[string]string // canonical key -> value
	keys                []string          // the body's JSON keys, in order
	body                map[string]string
}

// recorder is an executor that records every request and answers as
// cmd/fake-executor does: 200 with the request's inference id.
func recorder(t *testing.T) (string, func() []seen) {
	var mu sync.Mutex
	var got []seen
	url := server(t, func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s := seen{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, headers: map[string]string{}, body: map[string]string{}}
		for k := range r.Header {
			s.headers[k] = r.Header.Get(k)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		for tok, err := dec.Token(); err == nil; tok, err = dec.Token() {
			if k, ok := tok.(string); ok && dec.More() && len(s.keys) == len(s.body) {
				s.keys = append(s.keys, k)
				v, _ := dec.Token()
				s.body[k], _ = v.(string)
			}
		}
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"inference_id": s.body["inference_id"], "response": "r", "response_hash": "h"})
	}).URL
	return url, func() []seen { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

// organic sends the request cmd/loadgen's callExecutor sends (its code,
// with its client: Go's default transport, redirects not followed).
func organic(t *testing.T, baseURL, id, model string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	body, _ := json.Marshal(map[string]string{"inference_id": id, "model": model, "prompt": "load driver prompt " + id})
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(baseURL, "/")+"/v1/inference", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// A canary is what a client sends: same method, path (the inference
// URL's path kept), header keys and values (but the length), JSON keys in
// the same order, no query; and its id is fresh each time, random hex
// that no client id shape gives away.
func TestCanaryRequestShapeMatchesLoadgen(t *testing.T) {
	base, requests := recorder(t)
	base += "/api/" // an inference URL with a path and a trailing slash
	organic(t, base, "lg1700000000-12-3", "llama-7b")
	c := newCanarySender(testConfig())
	const n = 50
	for range n {
		if ok, err := c.send(context.Background(), base, "llama-7b"); !ok {
			t.Fatalf("canary to a serving executor missed: %v", err)
		}
	}
	got := requests()
	want := got[0]
	delete(want.headers, "Content-Length")
	for _, h := range []string{"Content-Type", "User-Agent", "Accept-Encoding"} {
		if want.headers[h] == "" {
			t.Fatalf("the client request has no %s: %v", h, want.headers)
		}
	}
	ids := map[string]bool{}
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, s := range got[1:] {
		if s.method != want.method || s.path != want.path || s.path != "/api/v1/inference" || s.query != "" {
			t.Fatalf("canary %s %s?%s, client %s %s", s.method, s.path, s.query, want.method, want.path)
		}
		if _, ok := s.headers["Content-Length"]; !ok {
			t.Fatal("canary without Content-Length")
		}
		delete(s.headers, "Content-Length")
		if !mapsEqual(s.headers, want.headers) {
			t.Fatalf("canary headers %v, client headers %v", s.headers, want.headers)
		}
		if !slices.Equal(s.keys, want.keys) || len(s.keys) != 3 {
			t.Fatalf("canary JSON keys %v, client %v", s.keys, want.keys)
		}
		id := s.body["inference_id"]
		if ids[id] || !hexID.MatchString(id) {
			t.Fatalf("canary id %q reused or not 16 random bytes in hex", id)
		}
		ids[id] = true
		if s.body["model"] != "llama-7b" {
			t.Fatalf("canary asked for %q", s.body["model"])
		}
	}
	if len(ids) != n {
		t.Fatalf("%d fresh ids for %d canaries", len(ids), n)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Prompt sizes stay within [40 B, 4,000 B] (a body far under the 64 KiB
// an executor accepts), vary over every bucket of the table, and read as
// text.
func TestCanaryPromptSizesBoundedAndVaried(t *testing.T) {
	buckets := make([]int, len(promptSizes))
	text := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9 ,.?'-]*$`)
	for range 5000 {
		p := canaryPrompt()
		if len(p) < minPromptBytes || len(p) > maxPromptBytes || !text.MatchString(p) {
			t.Fatalf("prompt of %d bytes out of bounds or not plain text: %q", len(p), p)
		}
		for i, b := range promptSizes {
			if len(p) < b.hi {
				buckets[i]++
				break
			}
		}
	}
	for i, n := range buckets {
		if n == 0 {
			t.Errorf("no prompt in [%d, %d) out of 5000: %v", promptSizes[i].lo, promptSizes[i].hi, buckets)
		}
	}
	if body := canaryBody(newCanaryID(), strings.Repeat("m", 128)); len(body) > 8<<10 {
		t.Errorf("a canary body of %d bytes", len(body))
	}
	total := 0
	for _, b := range promptSizes {
		total += b.weight
	}
	if total != 100 {
		t.Errorf("the weights sum to %d, not 100", total)
	}
}

// A canary is ok only if answered 200 with a JSON body carrying its own
// inference id; a redirect is a miss and is not followed; every answer is
// bounded in time and in what is read.
func TestCanaryOutcomes(t *testing.T) {
	var redirectedHit atomic.Bool
	target := server(t, func(w http.ResponseWriter, r *http.Request) { redirectedHit.Store(true) })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	answer := func(code int, body func(id string) string) string {
		return server(t, func(w http.ResponseWriter, r *http.Request) {
			var req map[string]string
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body(req["inference_id"]))
		}).URL
	}
	cases := []struct {
		name string
		url  string
		ok   bool
	}{
		{"200 with its own id is ok", answer(200, func(id string) string { return `{"inference_id":"` + id + `","response":"x"}` }), true},
		{"200 with another id is a miss", answer(200, func(string) string { return `{"inference_id":"someone-else"}` }), false},
		{"200 with a body that is not JSON is a miss", answer(200, func(string) string { return "ok" }), false},
		{"503 with its own id is a miss", answer(503, func(id string) string { return `{"inference_id":"` + id + `"}` }), false},
		{"a redirect is a miss and is not followed", server(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/v1/inference", http.StatusTemporaryRedirect)
		}).URL, false},
		{"a hanging executor is a miss within the timeout", server(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client leave
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}).URL, false},
		{"a huge body is read only in part (a miss)", server(t, func(w http.ResponseWriter, _ *http.Request) {
			chunk := `{"inference_id":"` + strings.Repeat("x", 64<<10)
			for range 1024 { // 64 MiB if anyone read it all
				if _, err := w.Write([]byte(chunk)); err != nil {
					return
				}
			}
		}).URL, false},
		{"connection refused is a miss", deadURL(t), false},
		{"not a URL", "::nope", false},
		{"not http", "ftp://example.com", false},
	}
	cfg := testConfig()
	cfg.CanaryTimeout = 300 * time.Millisecond
	c := newCanarySender(cfg)
	for _, tc := range cases {
		start := time.Now()
		ok, err := c.send(context.Background(), tc.url, "m")
		if ok != tc.ok {
			t.Errorf("%s: ok=%v (%v), want %v", tc.name, ok, err, tc.ok)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s, beyond the canary timeout", tc.name, d)
		}
	}
	if redirectedHit.Load() {
		t.Error("the redirect was followed")
	}
}

// Attack: a participant registers an inference URL pointing at the
// validator's own network (loopback, or a name that resolves there) to
// make every validator POST canaries to internal services. Without
// allow-private the canary is refused at dial time, as probes are.
func TestAttackCanaryInternalTargetsRefusedUnlessAllowed(t *testing.T) {
	var hit atomic.Int64
	s := server(t, func(http.ResponseWriter, *http.Request) { hit.Add(1) })
	cfg := testConfig()
	cfg.AllowPrivate = false
	c := newCanarySender(cfg)
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	for _, u := range []string{s.URL, "http://localhost" + port, "http://[::ffff:127.0.0.1]" + port} {
		ok, err := c.send(context.Background(), u, "m")
		if ok || !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("%s: ok=%v err=%v, want refused", u, ok, err)
		}
	}
	if hit.Load() != 0 {
		t.Fatal("a canary reached an internal address")
	}
	cfg.AllowPrivate = true // the localnet's setting
	if _, err := newCanarySender(cfg).send(context.Background(), s.URL, "m"); hit.Load() != 1 {
		t.Fatalf("allow-private did not let the canary through: %v", err)
	}
}

// The endpoint is the inference URL's scheme, host and path with
// /v1/inference after it, as clients build it; user info, query and
// fragment are dropped, other schemes refused.
func TestCanaryInferenceURL(t *testing.T) {
	for raw, want := range map[string]string{
		"http://e.example":                    "http://e.example/v1/inference",
		"https://e.example:8443/":             "https://e.example:8443/v1/inference",
		"http://e.example/api//":              "http://e.example/api/v1/inference",
		"http://user:pw@e.example/x?q=1#frag": "http://e.example/x/v1/inference",
		"ftp://e.example":                     "",
		"http:///nohost":                      "",
	} {
		got, err := inferenceURL(raw)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q %v, want %q", raw, got, err, want)
		}
	}
}
