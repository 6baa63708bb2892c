package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

const (
	// maxBulkBodyBytes bounds a POST /control/bulk body.
	maxBulkBodyBytes = 64 << 10
	// maxBulkGroups bounds the groups of one bulk change.
	maxBulkGroups = 64
)

// BulkRequest is the body of POST /control/bulk: groups of executors, each
// switched to its mode and/or failure percentage. Every group is checked
// before any executor is touched, so a bad request changes nothing.
type BulkRequest struct {
	Groups []BulkGroup `json:"groups"`
}

// BulkGroup is one set of executors and what they become. Executors is an
// index set as parseIndexes reads it ("0-9,15"); Mode is up, refuse or
// hang; FailPct, if set, is the new failure percentage (0..100);
// SpareCanaries, if set, whether canaries are spared. A group sets at
// least one of the three.
type BulkGroup struct {
	Executors     string `json:"executors"`
	Mode          Mode   `json:"mode,omitempty"`
	FailPct       *int   `json:"fail_pct,omitempty"`
	SpareCanaries *bool  `json:"spare_canaries,omitempty"`
}

// FleetSummary is the body of every fleet control reply: the fleet's size
// and how many executors are in each mode, failing some inferences, or
// sparing canaries.
type FleetSummary struct {
	Size            int          `json:"size"`
	Modes           map[Mode]int `json:"modes"`
	Failing         int          `json:"failing"`
	SparingCanaries int          `json:"sparing_canaries"`
}

// FleetState is the body of GET /control/fleet.
type FleetState struct {
	FleetSummary
	Executors []ExecutorState `json:"executors"`
}

// ExecutorState is one executor in GET /control/fleet.
type ExecutorState struct {
	Index         int    `json:"index"`
	Name          string `json:"name"`
	Mode          Mode   `json:"mode"`
	FailPct       int    `json:"fail_pct"`
	SpareCanaries bool   `json:"spare_canaries"`
}

// bulkChange is a checked group: the executors and what they become.
type bulkChange struct {
	indexes []int
	mode    Mode // "" leaves the mode
	failPct *int
	spare   *bool
}

// handleBulk serves POST /control/bulk.
func (f *Fleet) handleBulk(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBulkBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("body: %v (at most %d bytes)", err, maxBulkBodyBytes))
		return
	}
	changes, err := f.checkBulk(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	for _, c := range changes {
		for _, j := range c.indexes {
			st := f.servers[j].State()
			if c.mode != "" {
				st.SetMode(c.mode)
			}
			if c.failPct != nil {
				_ = st.SetFailPct(*c.failPct) // checked by checkBulk
			}
			if c.spare != nil {
				st.SetSpareCanaries(*c.spare)
			}
		}
	}
	writeJSON(w, http.StatusOK, f.summary())
}

// checkBulk decodes and checks a bulk request whole: known fields only,
// at most maxBulkGroups groups, valid modes and percentages, indexes in
// the fleet, and no executor in two groups (its outcome would depend on
// the order).
func (f *Fleet) checkBulk(body []byte) ([]bulkChange, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req BulkRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON: data after the request")
	}
	if len(req.Groups) == 0 || len(req.Groups) > maxBulkGroups {
		return nil, fmt.Errorf("groups: want 1..%d, got %d", maxBulkGroups, len(req.Groups))
	}
	owner := make([]int, f.Size()) // group+1 of each executor, 0: none
	changes := make([]bulkChange, 0, len(req.Groups))
	for g, grp := range req.Groups {
		c := bulkChange{failPct: grp.FailPct, spare: grp.SpareCanaries}
		switch grp.Mode {
		case "":
		case ModeUp, ModeRefuse, ModeHang:
			c.mode = grp.Mode
		default:
			return nil, fmt.Errorf("group %d: mode must be %q, %q or %q, got %q", g, ModeUp, ModeRefuse, ModeHang, grp.Mode)
		}
		if c.mode == "" && c.failPct == nil && c.spare == nil {
			return nil, fmt.Errorf("group %d: sets none of mode, fail_pct and spare_canaries", g)
		}
		if p := c.failPct; p != nil && (*p < 0 || *p > 100) {
			return nil, fmt.Errorf("group %d: fail_pct must be in 0..100, got %d", g, *p)
		}
		indexes, err := parseIndexes(grp.Executors, f.Size())
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", g, err)
		}
		for _, j := range indexes {
			if owner[j] != 0 {
				return nil, fmt.Errorf("group %d: executor %d is in group %d too", g, j, owner[j]-1)
			}
			owner[j] = g + 1
		}
		c.indexes = indexes
		changes = append(changes, c)
	}
	return changes, nil
}

// handleFleet serves GET /control/fleet[?executors=SET]: the summary and
// the listed executors (default: all).
func (f *Fleet) handleFleet(w http.ResponseWriter, r *http.Request) {
	indexes := make([]int, f.Size())
	for j := range indexes {
		indexes[j] = j
	}
	if spec := r.URL.Query().Get("executors"); spec != "" {
		var err error
		if indexes, err = parseIndexes(spec, f.Size()); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	out := FleetState{FleetSummary: f.summary(), Executors: make([]ExecutorState, 0, len(indexes))}
	for _, j := range indexes {
		s := f.servers[j]
		mode, pct, spare := s.st.settings()
		out.Executors = append(out.Executors, ExecutorState{Index: j, Name: s.cfg.Name, Mode: mode, FailPct: pct, SpareCanaries: spare})
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fleet) summary() FleetSummary {
	sum := FleetSummary{Size: f.Size(), Modes: map[Mode]int{ModeUp: 0, ModeRefuse: 0, ModeHang: 0}}
	for _, s := range f.servers {
		mode, pct, spare := s.st.settings()
		sum.Modes[mode]++
		if pct > 0 {
			sum.Failing++
		}
		if spare {
			sum.SparingCanaries++
		}
	}
	return sum
}
