package main

import (
	"strings"
	"testing"
)

func TestPickAgents(t *testing.T) {
	accounts := map[string]*account{}
	for _, n := range []string{"agent10", "agent2", "agent0", "griefer", "outsider", "exec0", "agentx"} {
		accounts["addr-"+n] = &account{name: n, address: "addr-" + n}
	}
	cases := []struct {
		name, flag string
		grief      bool
		want       string // joined key names, or the error's text
	}{
		{"default: the localnet's agents in numeric order", "", false, "agent0,agent2,agent10"},
		{"grief default: the griefer", "", true, "griefer"},
		{"named, in the given order", "agent2, outsider", false, "agent2,outsider"},
		{"unknown key", "agent7", false, `no key "agent7"`},
		{"attack: one agent named twice to double its share", "agent0,agent0", false, "named twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickAgents(tc.flag, tc.grief, accounts)
			var text string
			if err != nil {
				text = err.Error()
			} else {
				names := make([]string, len(got))
				for i, a := range got {
					names[i] = a.name
				}
				text = strings.Join(names, ",")
			}
			if !strings.Contains(text, tc.want) {
				t.Fatalf("got %q, want %q", text, tc.want)
			}
		})
	}
	if _, err := pickAgents("", false, map[string]*account{}); err == nil {
		t.Fatal("an empty keyring gave agents")
	}
}

func TestRefusalKeepsTheChainsText(t *testing.T) {
	r := newRefusal(18, "failed to execute message; message index: 0: not a transfer agent: infer1x\n")
	if r.Reason != "not a transfer agent: infer1x" || reasonOf(r) != r.Reason {
		t.Fatalf("reason %q", r.Reason)
	}
}
