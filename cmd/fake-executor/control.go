package main

import (
	"fmt"
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

// handleFail serves POST /control/fail?pct=N&spare_canaries=true|false:
// pct, an integer in 0..100, sets the failure percentage; spare_canaries
// sets whether canaries are spared. At least one is given; both are
// checked before either is applied.
func (s *Server) handleFail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("pct") && !q.Has("spare_canaries") {
		writeError(w, http.StatusBadRequest, "pct must be an integer in 0..100")
		return
	}
	pct := -1
	if q.Has("pct") {
		var err error
		if pct, err = strconv.Atoi(q.Get("pct")); err != nil {
			writeError(w, http.StatusBadRequest, "pct must be an integer in 0..100")
			return
		}
		if pct < 0 || pct > 100 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("fail pct must be in 0..100, got %d", pct))
			return
		}
	}
	var spare *bool
	if q.Has("spare_canaries") {
		v := q.Get("spare_canaries")
		if v != "true" && v != "false" {
			writeError(w, http.StatusBadRequest, "spare_canaries must be true or false")
			return
		}
		b := v == "true"
		spare = &b
	}
	if pct >= 0 {
		_ = s.st.SetFailPct(pct) // checked above
	}
	if spare != nil {
		s.st.SetSpareCanaries(*spare)
	}
	s.handleState(w, r)
}

// handleState serves GET /control/state.
func (s *Server) handleState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Snapshot())
}

// Snapshot returns the current state as reported by GET /control/state.
func (s *Server) Snapshot() Snapshot {
	mode, pct, spare := s.st.settings()
	return Snapshot{
		Name:          s.cfg.Name,
		Model:         s.cfg.Model,
		Mode:          mode,
		FailPct:       pct,
		SpareCanaries: spare,
		LatencyMs:     s.cfg.Latency.Milliseconds(),
		Seed:          s.cfg.Seed,
		Counters:      s.st.Counters(),
	}
}
