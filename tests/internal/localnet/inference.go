package localnet

// ParticipantJSON is a participant as `inferenced q inference participant`
// reports it.
type ParticipantJSON struct {
	Address string `json:"address"`
	Status  string `json:"status"`
	Weight  string `json:"weight"`
	Bond    struct {
		Denom  string `json:"denom"`
		Amount string `json:"amount"`
	} `json:"bond"`
	// LeavingEpoch is "0" (or absent) while it serves.
	LeavingEpoch string `json:"leaving_epoch"`
	Stats        struct {
		InferenceCount string `json:"inference_count"`
		MissedRequests string `json:"missed_requests"`
	} `json:"current_epoch_stats"`
}

// InferenceJSON is an inference as `inferenced q inference inference`
// reports it.
type InferenceJSON struct {
	ID               string `json:"inference_id"`
	Executor         string `json:"executor"`
	Status           string `json:"status"`
	ExpirationHeight string `json:"expiration_height"`
}

// Participant reads participant addr (node 0).
func (n *Net) Participant(addr string) ParticipantJSON {
	n.t.Helper()
	p, err := n.participant(addr)
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

func (n *Net) participant(addr string) (ParticipantJSON, error) {
	var res struct {
		Participant ParticipantJSON `json:"participant"`
	}
	err := n.Query(&res, "inference", "participant", addr)
	return res.Participant, err
}

// Inference reads the inference id of the transfer agent at address agent
// (node 0): ids are unique per agent.
func (n *Net) Inference(agent, id string) InferenceJSON {
	n.t.Helper()
	var res struct {
		Inference InferenceJSON `json:"inference"`
	}
	if err := n.Query(&res, "inference", "inference", agent, id); err != nil {
		n.t.Fatal(err)
	}
	return res.Inference
}
