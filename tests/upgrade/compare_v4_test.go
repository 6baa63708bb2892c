package upgrade_test

import (
	"encoding/json"
	"fmt"
)

// The fields the SDK v0.55 move adds to its modules' params, at the values
// their migrations write (x/auth 6 to 7, x/staking 5 to 6).
const (
	mlDsaSigCostField  = "sig_verify_cost_mldsa65"
	keyRotationFee     = "key_rotation_fee"
	keyRotationPool    = "key_rotation_fee_pool"
	keyRotationFeeUnit = "1000000"
)

// compareExportsV4 checks an export taken with the previous release (SDK
// v0.53) at the last height before the upgrade against one taken with this
// release (SDK v0.55) at the upgrade height, as docs/upgrade.md says v4
// goes: x/inference's state is carried as it was (params, participants
// with their bonds, inferences, breaker records, epoch, the bundle switch
// height), stats only grow and open inferences stay or close, as block H's
// transactions make them; x/auth's params gain the ML-DSA cost and
// x/staking's the key-rotation fee in the bond denom, every other param
// kept; the validators keep their consensus keys and power; every account
// stays and the key-rotation fee pool appears as a burner module account;
// balances and supply are unchanged.
func compareExportsV4(beforeJSON, afterJSON []byte) (comparison, error) {
	before, after, err := decodeExports(beforeJSON, afterJSON)
	if err != nil {
		return comparison{}, err
	}
	var c comparison
	b, a := before.AppState.Inference, after.AppState.Inference
	compareParams(&c, b.Params, a.Params, nil)
	if !jsonEqual(b.BundleV3Height, a.BundleV3Height) {
		c.problem("bundle_v3_height %s -> %s", b.BundleV3Height, a.BundleV3Height)
	}
	compareKeptParticipants(&c, b.Participants, a.Participants)
	compareInferences(&c, b.Inferences, a.Inferences)
	compareRecords(&c, b.ExecutorHealth, a.ExecutorHealth)
	if !jsonEqual(b.Epoch, a.Epoch) {
		c.problem("epoch changed: %s -> %s", b.Epoch, a.Epoch)
	}
	compareSDKParams(&c, before, after)
	compareValidators(&c, before.AppState.Staking.Validators, after.AppState.Staking.Validators)
	compareAccounts(&c, before.AppState.Auth.Accounts, after.AppState.Auth.Accounts)
	compareBalances(&c, before, after)
	return c, nil
}

// compareKeptParticipants: every participant as it was, its epoch stats
// never lower.
func compareKeptParticipants(c *comparison, before, after []map[string]json.RawMessage) {
	c.pairs("participant", "address", before, after, func(addr string, p, q map[string]json.RawMessage) {
		for _, k := range sortedKeys(p) {
			if k != "current_epoch_stats" && !jsonEqual(p[k], q[k]) {
				c.problem("participant %s %s: %s -> %s", addr, k, p[k], q[k])
			}
		}
		c.statsNeverLower(addr, p, q)
	})
	c.Summary = append(c.Summary, fmt.Sprintf("participants: %d before, %d after, kept", len(before), len(after)))
}

// compareSDKParams: x/auth and x/staking params as they were but for the
// field each migration adds, at its value.
func compareSDKParams(c *comparison, before, after export) {
	authAdded := compareAddedParam(c, "auth", before.AppState.Auth.Params, after.AppState.Auth.Params, mlDsaSigCostField)
	if authAdded == "" || authAdded == `"0"` {
		c.problem("auth %s after the upgrade: %s, want its default", mlDsaSigCostField, authAdded)
	}
	fee := compareAddedParam(c, "staking", before.AppState.Staking.Params, after.AppState.Staking.Params, keyRotationFee)
	bond := str(before.AppState.Staking.Params["bond_denom"])
	if want := fmt.Sprintf(`{"amount":"%s","denom":"%s"}`, keyRotationFeeUnit, bond); !jsonEqual(json.RawMessage(fee), json.RawMessage(want)) {
		c.problem("staking %s after the upgrade: %s, want %s", keyRotationFee, compact(json.RawMessage(fee)), want)
	}
	c.Summary = append(c.Summary, fmt.Sprintf("params: auth + %s = %s, staking + %s = %s, the rest kept",
		mlDsaSigCostField, authAdded, keyRotationFee, compact(json.RawMessage(fee))))
}

// compareAddedParam reports every param of module that changed other than
// added, which must be absent (or zero) before; it returns added's value
// after.
func compareAddedParam(c *comparison, module string, before, after map[string]json.RawMessage, added string) string {
	for _, k := range sortedKeys(before) {
		if k != added && !jsonEqual(before[k], after[k]) {
			c.problem("%s param %s: %s -> %s", module, k, before[k], after[k])
		}
	}
	for _, k := range sortedKeys(after) {
		if _, ok := before[k]; !ok && k != added {
			c.problem("%s param %s appeared: %s", module, k, after[k])
		}
	}
	if v, ok := before[added]; ok {
		c.problem("%s param %s before the upgrade: %s, want none", module, added, v)
	}
	return string(after[added])
}

// compareValidators: the same validators, each with its consensus key,
// tokens and status.
func compareValidators(c *comparison, before, after []map[string]json.RawMessage) {
	c.pairs("validator", "operator_address", before, after, func(op string, v, w map[string]json.RawMessage) {
		for _, k := range []string{"consensus_pubkey", "tokens", "status", "jailed"} {
			if !jsonEqual(v[k], w[k]) {
				c.problem("validator %s %s: %s -> %s", op, k, v[k], w[k])
			}
		}
	})
	c.Summary = append(c.Summary, fmt.Sprintf("validators: %d, consensus keys and power kept", len(before)))
}

// compareAccounts: every account kept; the key-rotation fee pool, absent
// before, a burner module account after.
func compareAccounts(c *comparison, before, after []map[string]json.RawMessage) {
	byAddr := map[string]map[string]json.RawMessage{}
	var pool map[string]json.RawMessage
	for _, a := range after {
		byAddr[accountAddress(a)] = a
		if str(a["name"]) == keyRotationPool {
			pool = a
		}
	}
	for _, a := range before {
		if str(a["name"]) == keyRotationPool {
			c.problem("%s existed before the upgrade", keyRotationPool)
		}
		if _, ok := byAddr[accountAddress(a)]; !ok {
			c.problem("account %s lost", accountAddress(a))
		}
	}
	switch {
	case pool == nil:
		c.problem("no %s module account after the upgrade", keyRotationPool)
	case compact(pool["permissions"]) != `["burner"]`:
		c.problem("%s permissions %s, want [burner]", keyRotationPool, compact(pool["permissions"]))
	}
	c.Summary = append(c.Summary, fmt.Sprintf("accounts: %d before, %d after (+ %s)", len(before), len(after), keyRotationPool))
}

// accountAddress is an exported account's address, a module account's
// under its base account.
func accountAddress(a map[string]json.RawMessage) string {
	if addr := str(a["address"]); addr != "" {
		return addr
	}
	return str(field(a["base_account"], "address"))
}
