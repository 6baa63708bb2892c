package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"text/tabwriter"
)

// executorStats counts what the driver saw for one executor. Assigned is
// what GetRandomExecutor routed to it; the chain columns come from querying
// the inferences after they could no longer be open (chain-pruned: the
// start succeeded but the inference was pruned before the driver settled;
// chain-refused: the start passed CheckTx but was refused when the block
// executed it).
type executorStats struct {
	Assigned      int `json:"assigned"`
	Probes        int `json:"probes"`
	StartFailed   int `json:"start_failed"`
	Answered      int `json:"answered"`
	NoAnswer      int `json:"no_answer"`
	FinishFailed  int `json:"finish_failed"`
	ChainFinished int `json:"chain_finished"`
	ChainExpired  int `json:"chain_expired"`
	ChainOpen     int `json:"chain_open"`
	ChainPruned   int `json:"chain_pruned"`
	ChainMissing  int `json:"chain_missing"`
}

// event is one routed request (or, with -grief, one start attempt),
// written as a JSON line with -events.
type event struct {
	Height      int64  `json:"height"`
	InferenceID string `json:"inference_id"`
	Executor    string `json:"executor"`
	Outcome     string `json:"outcome"`
	// Probe marks the request that selection offered as a probe.
	Probe bool `json:"probe,omitempty"`
	// Agent is the key name of the agent that started it.
	Agent string `json:"agent,omitempty"`
	// Reason is the chain's error text for a refused transaction.
	Reason string `json:"reason,omitempty"`
}

type stats struct {
	mu      sync.Mutex
	byExec  map[string]*executorStats
	byAgent map[string]*agentStats
	events  io.Writer
}

func newStats(events io.Writer) *stats {
	return &stats{byExec: map[string]*executorStats{}, byAgent: map[string]*agentStats{}, events: events}
}

func (s *stats) update(executor string, f func(*executorStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	es, ok := s.byExec[executor]
	if !ok {
		es = &executorStats{}
		s.byExec[executor] = es
	}
	f(es)
}

func (s *stats) record(ev event) {
	if s.events == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bz, err := json.Marshal(ev); err == nil {
		_, _ = s.events.Write(append(bz, '\n'))
	}
}

func (s *stats) print(w io.Writer, names map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	execs := make([]string, 0, len(s.byExec))
	for e := range s.byExec {
		execs = append(execs, e)
	}
	sort.Strings(execs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "executor\tkey\tassigned\tprobes\tanswered\tno-answer\tstart-failed\tfinish-failed\tchain-finished\tchain-expired\tchain-open\tchain-pruned\tchain-refused")
	var total executorStats
	for _, e := range execs {
		es := s.byExec[e]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", e, names[e], es.Assigned, es.Probes, es.Answered, es.NoAnswer,
			es.StartFailed, es.FinishFailed, es.ChainFinished, es.ChainExpired, es.ChainOpen, es.ChainPruned, es.ChainMissing)
		total.Assigned += es.Assigned
		total.Answered += es.Answered
		total.NoAnswer += es.NoAnswer
		total.ChainFinished += es.ChainFinished
		total.ChainExpired += es.ChainExpired
	}
	fmt.Fprintf(tw, "total\t\t%d\t\t%d\t%d\t\t\t%d\t%d\t\n", total.Assigned, total.Answered, total.NoAnswer,
		total.ChainFinished, total.ChainExpired)
	_ = tw.Flush()
}
