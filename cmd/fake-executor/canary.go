package main

// How the fake executor tells canaries from clients' inferences, for
// -spare-canaries. It models an executor that looks each inference id up
// on chain before serving it: a client's inference has a MsgStartInference
// there, a validator's canary has none. In the localnet the only clients
// are the load driver's (cmd/loadgen), whose ids are
// fmt.Sprintf("%s-%d-%d", runID, height, k) with runID "lg<unix time>",
// so an id of that shape stands for one found on chain and anything else
// for a canary. Nothing else of the request is looked at: a canary is
// shaped exactly like a client's request (monitor/canary.go).

// isOrganicID reports whether id has the load driver's shape,
// lg<digits>-<digits>-<digits>.
func isOrganicID(id string) bool {
	if len(id) < 2 || id[:2] != "lg" {
		return false
	}
	parts, digits := 1, 0
	for i := 2; i < len(id); i++ {
		switch c := id[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '-' && digits > 0:
			parts, digits = parts+1, 0
		default:
			return false
		}
	}
	return parts == 3 && digits > 0
}
