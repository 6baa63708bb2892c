package types

import "cosmossdk.io/collections"

const (
	// ModuleName is the module's name, store key and router route.
	ModuleName = "inference"
	// StoreKey is the KV store key.
	StoreKey = ModuleName
)

// Collection prefixes. Never reuse or renumber one: they are the state layout.
var (
	ParamsKey                 = collections.NewPrefix(0)
	ParticipantsPrefix        = collections.NewPrefix(1)
	EpochKey                  = collections.NewPrefix(2)
	EpochMembersPrefix        = collections.NewPrefix(3)
	EpochMemberIndexPrefix    = collections.NewPrefix(4)
	InferencesPrefix          = collections.NewPrefix(5)
	ExpiryQueuePrefix         = collections.NewPrefix(6)
	ParticipantCountKey       = collections.NewPrefix(7)
	ExecutorHealthPrefix      = collections.NewPrefix(8)
	CooldownIndexPrefix       = collections.NewPrefix(9)
	PendingSamplesPrefix      = collections.NewPrefix(10)
	SampleSequenceKey         = collections.NewPrefix(11)
	HealthGatePrefix          = collections.NewPrefix(12)
	ModelWeightsPrefix        = collections.NewPrefix(13)
	HealthRecordCountKey      = collections.NewPrefix(14)
	SamplesQueuedKey          = collections.NewPrefix(15)
	TransferAgentsPrefix      = collections.NewPrefix(16)
	LeavingAgentsPrefix       = collections.NewPrefix(17)
	TransferAgentCountKey     = collections.NewPrefix(18)
	PruneIndexPrefix          = collections.NewPrefix(19)
	PrunedThroughKey          = collections.NewPrefix(20)
	LeavingParticipantsPrefix = collections.NewPrefix(21)
	BundleV3HeightKey         = collections.NewPrefix(22)
	// StreaksKey: the breaker's streaks item (x/inference/breakerstore,
	// streaks.go): the epoch, the height of the last applied attested or
	// service misses it carries and their executors (a bitmap in group
	// order), the same for the service oks. A set bit is a member with a
	// record; the epoch boundary drops it.
	StreaksKey = collections.NewPrefix(23)
	// HeldBitsKey: the breaker's held bits (breakerstore/heldbits.go): by
	// group index, the members with a record and the quiet ones among
	// them. Exactly the members with a record; the epoch boundary drops it.
	HeldBitsKey = collections.NewPrefix(24)
	// VerdictReferenceKey: the two latest distinct attested samples, each
	// with the height of the block that carried them
	// (x/inference/verdictref): what vote extensions' verdicts are
	// relative to. Written only from bundle_v3_height on, and only when a
	// block carries samples that differ from the current ones.
	VerdictReferenceKey = collections.NewPrefix(25)
)
