package main

import (
	"net/http"
	"strconv"
)

// The control API always answers, whatever the mode. Every control endpoint
// replies 200 with the state snapshot (GET /control/state's body), or 400
// with {"error": "..."} for a bad parameter.

// handleDark serves POST /control/dark?mode=refuse|hang (default refuse).
func (s *Server) handleDark(w http.ResponseWriter, r *http.Request) {
	m := r.URL.Query().Get("mode")
	if m == "" {
		m = string(ModeRefuse)
	}
	mode, err := parseDarkMode(m)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.st.SetMode(mode)
	s.handleState(w, r)
}

// handleUp serves POST /control/up.
func (s *Server) handleUp(w http.ResponseWriter, r *http.Request) {
	s.st.SetMode(ModeUp)
	s.handleState(w, r)
}

// handleFail serves POST /control/fail?pct=N with N an integer in 0..100.
func (s *Server) handleFail(w http.ResponseWriter, r *http.Request) {
	pct, err := strconv.Atoi(r.URL.Query().Get("pct"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "pct must be an integer in 0..100")
		return
	}
	if err := s.st.SetFailPct(pct); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.handleState(w, r)
}

// handleState serves GET /control/state.
func (s *Server) handleState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Snapshot())
}

// Snapshot returns the current state as reported by GET /control/state.
func (s *Server) Snapshot() Snapshot {
	mode, pct := s.st.modeAndFailPct()
	return Snapshot{
		Name:      s.cfg.Name,
		Model:     s.cfg.Model,
		Mode:      mode,
		FailPct:   pct,
		LatencyMs: s.cfg.Latency.Milliseconds(),
		Seed:      s.cfg.Seed,
		Counters:  s.st.Counters(),
	}
}
