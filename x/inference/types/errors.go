package types

import errorsmod "cosmossdk.io/errors"

// Module errors. Codes are part of the API: never renumber.
var (
	ErrInvalidParams       = errorsmod.Register(ModuleName, 2, "invalid params")
	ErrInvalidSigner       = errorsmod.Register(ModuleName, 3, "signer is not the authority")
	ErrParticipantExists   = errorsmod.Register(ModuleName, 4, "participant already registered")
	ErrParticipantNotFound = errorsmod.Register(ModuleName, 5, "participant not found")
	ErrInvalidParticipant  = errorsmod.Register(ModuleName, 6, "invalid participant")
	ErrInferenceExists     = errorsmod.Register(ModuleName, 7, "inference already exists")
	ErrInferenceNotFound   = errorsmod.Register(ModuleName, 8, "inference not found")
	ErrInvalidInference    = errorsmod.Register(ModuleName, 9, "invalid inference")
	ErrExecutorNotRoutable = errorsmod.Register(ModuleName, 10, "executor is not routable")
	ErrNotExecutor         = errorsmod.Register(ModuleName, 11, "signer is not the inference's executor")
	ErrInferenceNotStarted = errorsmod.Register(ModuleName, 12, "inference is no longer in progress")
	ErrNoExecutor          = errorsmod.Register(ModuleName, 13, "no executor available")
	ErrNoEpoch             = errorsmod.Register(ModuleName, 14, "no epoch has started yet")
	ErrNotTransferAgent    = errorsmod.Register(ModuleName, 15, "sender is not a registered transfer agent")
	ErrAgentStopped        = errorsmod.Register(ModuleName, 16, "transfer agent is stopped for the rest of the epoch")
	ErrAgentExists         = errorsmod.Register(ModuleName, 17, "transfer agent already registered")
	ErrInvalidBond         = errorsmod.Register(ModuleName, 18, "invalid transfer-agent bond")
	ErrAgentLeaving        = errorsmod.Register(ModuleName, 19, "transfer agent is leaving")
	ErrTooManyAgents       = errorsmod.Register(ModuleName, 20, "transfer-agent registry is full")
	ErrProbeTaken          = errorsmod.Register(ModuleName, 21, "agent may not probe this executor again")
)

// Participant bonds and leaving (issue 13: codes 30-39).
var (
	ErrInvalidParticipantBond  = errorsmod.Register(ModuleName, 30, "invalid participant bond")
	ErrParticipantLeaving      = errorsmod.Register(ModuleName, 31, "participant is leaving")
	ErrParticipantRegistryFull = errorsmod.Register(ModuleName, 32, "participant registry is full")
)
