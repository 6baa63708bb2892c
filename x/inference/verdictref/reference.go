// Package verdictref is the reference liveness verdicts are sent against:
// the attested samples of a recent block, which every validator has in its
// state. A validator's extension carries its verdicts relative to it
// (verdict.Relative), so when most of the network sees the same executors
// down, the extensions carry only where each validator differs from what
// the chain already attested: a few exceptions, not a packing of the
// whole group. The reference changes nothing the chain decides: the tally
// turns each relative verdict back into the absolute one
// (aggregate.PackedAgainst), so the samples are the same.
//
// The extensions of the block at vote height H are made from the state
// after H-1 (ExtendVote) and tallied from the state after H (the next
// block's proposal): both must read the same reference. The state keeps
// the two latest distinct samples, each with the height of the block that
// carried them (Since), and the reference for H is the latest of them
// carried at or before H-1: after H-1 it is the current one; after H it
// is the current one too, unless block H carried new samples, and then
// the previous one.
package verdictref

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/inferenced/inferenced/x/inference/verdict"
)

// Entry is the attested samples a block carried: the epoch and group size
// they are about, in canonical compact form (verdict.Compact). Since is
// the block's height; 0 is no entry.
type Entry struct {
	Since   int64
	Epoch   uint64
	Members uint32
	Samples []byte
}

// Reference is the two latest distinct samples the chain applied, the
// current one first. Previous.Since < Current.Since when both are set;
// Previous is set only with Current.
type Reference struct {
	Current, Previous Entry
}

// Next is r after the block at height carried samples (packed, a packing
// of members) about epoch: they become the current entry when they differ
// from it (other samples, epoch or group size), the current one the
// previous; otherwise r is unchanged and changed is false, and nothing
// needs to be written.
func (r Reference) Next(height int64, epoch uint64, members int, packed []byte) (next Reference, changed bool, err error) {
	if height <= r.Current.Since {
		return r, false, fmt.Errorf("verdict reference: samples at height %d, the current ones are from %d", height, r.Current.Since)
	}
	if members <= 0 || members > maxMembers {
		return r, false, fmt.Errorf("verdict reference: group of %d", members)
	}
	cur := r.Current
	if cur.Since != 0 && cur.Epoch == epoch && int(cur.Members) == members {
		// Most blocks carry what the block before did: compared as
		// packings, which is cheaper than compacting the new one.
		if was, err := verdict.Expand(cur.Samples, members); err == nil && bytes.Equal(was, packed) {
			return r, false, nil
		}
	}
	compact, err := verdict.Compact(packed, members)
	if err != nil {
		return r, false, fmt.Errorf("verdict reference: %w", err)
	}
	return Reference{Current: Entry{Since: height, Epoch: epoch, Members: uint32(members), Samples: compact}, Previous: cur}, true, nil
}

// For is the reference of the extensions of the block at voteHeight about
// epoch's group of n: the packing of the latest entry carried at or before
// voteHeight-1 when it is about the same epoch and group size and not all
// ok, nil (every verdict read as it is, which is what all ok means)
// otherwise.
func (r Reference) For(voteHeight int64, epoch uint64, n int) ([]byte, error) {
	e := r.Current
	if e.Since > voteHeight-1 {
		e = r.Previous
	}
	// An all-ok reference (an empty compact list) changes no verdict:
	// none, so that readers skip the rotation.
	if e.Since == 0 || e.Since > voteHeight-1 || e.Epoch != epoch || int(e.Members) != n || len(e.Samples) == 0 {
		return nil, nil
	}
	packed, err := verdict.Expand(e.Samples, n)
	if err != nil {
		return nil, fmt.Errorf("verdict reference: %w", err)
	}
	return packed, nil
}

// maxMembers bounds a group (the module caps it far lower).
const maxMembers = 1 << 20

// version is the first byte of an encoded Reference.
const version = 1

// Encode is r's binary form: the version byte, then each entry as
// big-endian since (8 bytes), epoch (8), members (4), the samples' length
// (4) and the samples. Only what Decode accepts is written.
func Encode(r Reference) ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	out := []byte{version}
	for _, e := range []Entry{r.Current, r.Previous} {
		out = binary.BigEndian.AppendUint64(out, uint64(e.Since))
		out = binary.BigEndian.AppendUint64(out, e.Epoch)
		out = binary.BigEndian.AppendUint32(out, e.Members)
		out = binary.BigEndian.AppendUint32(out, uint32(len(e.Samples)))
		out = append(out, e.Samples...)
	}
	return out, nil
}

// Decode reads what Encode writes, strictly: one encoding per value.
func Decode(in []byte) (Reference, error) {
	if len(in) == 0 || in[0] != version {
		return Reference{}, errors.New("verdict reference: not a version-1 item")
	}
	in = in[1:]
	var es [2]Entry
	for k := range es {
		if len(in) < 24 {
			return Reference{}, errors.New("verdict reference: cut short")
		}
		since, l := binary.BigEndian.Uint64(in), binary.BigEndian.Uint32(in[20:])
		if since > 1<<62 || uint64(l) > uint64(len(in)-24) {
			return Reference{}, errors.New("verdict reference: height or length out of range")
		}
		es[k] = Entry{Since: int64(since), Epoch: binary.BigEndian.Uint64(in[8:]), Members: binary.BigEndian.Uint32(in[16:])}
		if l > 0 {
			es[k].Samples = bytes.Clone(in[24 : 24+l])
		}
		in = in[24+l:]
	}
	if len(in) != 0 {
		return Reference{}, errors.New("verdict reference: bytes after the entries")
	}
	r := Reference{Current: es[0], Previous: es[1]}
	return r, r.check()
}

// check is the invariant: each entry empty (all zero) or a canonical
// compact list of its members; the previous one older, and set only with
// the current one.
func (r Reference) check() error {
	for _, e := range []Entry{r.Current, r.Previous} {
		if e.Since == 0 {
			if e.Epoch != 0 || e.Members != 0 || len(e.Samples) != 0 {
				return errors.New("verdict reference: an empty entry with content")
			}
			continue
		}
		if e.Since < 0 || e.Members == 0 || e.Members > maxMembers {
			return fmt.Errorf("verdict reference: entry at %d for a group of %d", e.Since, e.Members)
		}
		if err := verdict.CheckCompact(e.Samples, int(e.Members)); err != nil {
			return fmt.Errorf("verdict reference: entry at %d: %w", e.Since, err)
		}
	}
	if r.Previous.Since != 0 && (r.Current.Since == 0 || r.Previous.Since >= r.Current.Since) {
		return errors.New("verdict reference: the previous entry is not older than the current one")
	}
	return nil
}
