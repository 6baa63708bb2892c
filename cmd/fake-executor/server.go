package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"
)

const (
	// maxBodyBytes bounds the POST /v1/inference body.
	maxBodyBytes = 64 << 10
	// defaultMaxHang bounds how long a request is held in hang mode.
	defaultMaxHang = 10 * time.Minute
)

// Config is the static configuration of one fake executor.
type Config struct {
	Name    string
	Model   string
	Latency time.Duration
	FailPct int
	// SpareCanaries serves canaries (ids not shaped like the load
	// driver's) whatever FailPct says.
	SpareCanaries bool
	Seed          uint64
	MaxHang       time.Duration // 0 means defaultMaxHang
}

// InferenceRequest is the body of POST /v1/inference.
type InferenceRequest struct {
	InferenceID string `json:"inference_id"`
	Model       string `json:"model"`
	Prompt      string `json:"prompt"`
}

// InferenceResponse is the 200 body of POST /v1/inference.
type InferenceResponse struct {
	InferenceID  string `json:"inference_id"`
	Response     string `json:"response"`
	ResponseHash string `json:"response_hash"`
}

// Server holds the handlers of the fake executor.
type Server struct {
	cfg Config
	st  *State
}

// NewServer validates cfg and builds a server whose state logs to logger.
func NewServer(cfg Config, logger *log.Logger) (*Server, error) {
	if cfg.Model == "" {
		return nil, errors.New("model must not be empty")
	}
	if cfg.Latency < 0 {
		return nil, fmt.Errorf("latency must not be negative, got %s", cfg.Latency)
	}
	if cfg.FailPct < 0 || cfg.FailPct > 100 {
		return nil, fmt.Errorf("fail-pct must be in 0..100, got %d", cfg.FailPct)
	}
	if cfg.MaxHang <= 0 || cfg.MaxHang > defaultMaxHang {
		cfg.MaxHang = defaultMaxHang
	}
	return &Server{cfg: cfg, st: NewState(logger, cfg.FailPct, cfg.SpareCanaries, cfg.Seed)}, nil
}

// State exposes the server's state (for shutdown and tests).
func (s *Server) State() *State { return s.st }

// Handler returns the routes of the executor and its control API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.routes(mux)
	return mux
}

// routes registers the executor's endpoints and its own control API.
func (s *Server) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("POST /v1/inference", s.handleInference)
	mux.HandleFunc("POST /control/dark", s.handleDark)
	mux.HandleFunc("POST /control/up", s.handleUp)
	mux.HandleFunc("POST /control/fail", s.handleFail)
	mux.HandleFunc("GET /control/state", s.handleState)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !s.gate(w, r) {
		return
	}
	s.st.healthServed.Add(1)
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) handleInference(w http.ResponseWriter, r *http.Request) {
	if mode, _ := s.st.Mode(); mode == ModeRefuse {
		s.refuse(w)
		return
	}
	// Read the body before any hang: the HTTP/1 server notices a client
	// disconnect (and cancels the context) only once the body is consumed.
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if !s.gate(w, r) {
		return
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(readErr, &mbe):
		s.badRequest(w, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("body exceeds %d bytes", maxBodyBytes))
		return
	case readErr != nil:
		s.badRequest(w, http.StatusBadRequest, "reading body: "+readErr.Error())
		return
	}
	var req InferenceRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.badRequest(w, http.StatusBadRequest, "invalid JSON: "+err.Error())
		return
	}
	if req.InferenceID == "" {
		s.badRequest(w, http.StatusBadRequest, "inference_id is required")
		return
	}
	if req.Model != s.cfg.Model {
		s.badRequest(w, http.StatusBadRequest,
			fmt.Sprintf("model %q not served (serving %q)", req.Model, s.cfg.Model))
		return
	}
	canary := !isOrganicID(req.InferenceID)
	if canary {
		s.st.canariesSeen.Add(1)
	}
	fail, spared := s.st.ShouldFail(canary)
	if spared {
		s.st.canariesSpared.Add(1)
	}
	if fail {
		s.st.inferencesFailed.Add(1)
		writeError(w, http.StatusServiceUnavailable, "injected failure")
		return
	}
	if !s.sleep(w, r, s.cfg.Latency) {
		return
	}
	resp := s.completion(req)
	sum := sha256.Sum256([]byte(resp))
	s.st.inferencesServed.Add(1)
	writeJSON(w, http.StatusOK, InferenceResponse{
		InferenceID:  req.InferenceID,
		Response:     resp,
		ResponseHash: hex.EncodeToString(sum[:]),
	})
}

// completion is the deterministic fake model output for req.
func (s *Server) completion(req InferenceRequest) string {
	return fmt.Sprintf("[%s] %s completion for %s: %s",
		s.cfg.Name, s.cfg.Model, req.InferenceID, req.Prompt)
}

// sleep waits d. It reports false if the request context ends first (the
// client is gone: nothing to answer) or if the executor shuts down first
// (answered with 503).
func (s *Server) sleep(w http.ResponseWriter, r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.st.Stopped():
		shuttingDown(w)
		return false
	}
}

func (s *Server) badRequest(w http.ResponseWriter, code int, msg string) {
	s.st.badRequests.Add(1)
	writeError(w, code, msg)
}

// shuttingDown answers a request released by shutdown.
func shuttingDown(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusServiceUnavailable, "shutting down")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
