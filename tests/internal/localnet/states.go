package localnet

import (
	"strings"

	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	"github.com/cosmos/gogoproto/proto"

	"github.com/inferenced/inferenced/x/inference/types"
	"github.com/inferenced/inferenced/x/inference/verdict"
)

// The names the chain answers with (REST, CLI, event attributes), taken
// from the generated enums so that the proto defines each one once.
var (
	// Breaker states.
	Healthy  = types.HEALTH_STATE_HEALTHY.String()
	Excluded = types.HEALTH_STATE_EXCLUDED.String()
	Probe    = types.HEALTH_STATE_PROBE.String()

	// Reasons for a return to HEALTHY.
	ProbeSucceeded = types.HEALTH_REASON_PROBE_SUCCEEDED.String()
	AttestedOK     = types.HEALTH_REASON_ATTESTED_OK.String()
	ServiceOK      = types.HEALTH_REASON_SERVICE_OK.String()

	// The evidence a transition was decided on.
	Attested = types.SAMPLE_KIND_ATTESTED.String()
	Traffic  = types.SAMPLE_KIND_TRAFFIC.String()
	Service  = types.SAMPLE_KIND_SERVICE.String()

	// Inference statuses.
	Finished = types.INFERENCE_STATUS_FINISHED.String()
	Expired  = types.INFERENCE_STATUS_EXPIRED.String()

	// Participant status.
	Active = types.PARTICIPANT_STATUS_ACTIVE.String()

	// A governance proposal's status once its messages have run.
	ProposalPassed = govv1.StatusPassed.String()

	// An executor's attested sample in a health bundle (Samples).
	SampleOK   = verdict.OK.String()
	SampleMiss = verdict.Miss.String()

	// healthChanged is the type of the breaker's transition events.
	healthChanged = proto.MessageName(&types.EventExecutorHealthChanged{})
	// ScopedEvent: a traffic trip of an executor the canaries see serving
	// kept out only the agents whose misses counted; ProbeStartedEvent:
	// an inference took a PROBE executor's probe slot (Events).
	ScopedEvent       = proto.MessageName(&types.EventExecutorScoped{})
	ProbeStartedEvent = proto.MessageName(&types.EventProbeStarted{})
)

// Short is an enum name without its type's prefix, for the figures:
// HEALTH_STATE_EXCLUDED is EXCLUDED, SAMPLE_KIND_TRAFFIC is TRAFFIC.
func Short(name string) string {
	for _, prefix := range []string{"HEALTH_STATE_", "HEALTH_REASON_", "SAMPLE_KIND_", "INFERENCE_STATUS_", "PARTICIPANT_STATUS_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return rest
		}
	}
	return name
}
