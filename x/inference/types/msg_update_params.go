package types

import errorsmod "cosmossdk.io/errors"

// ValidateBasic checks the proposed parameters without state, so that a
// governance proposal carrying invalid ones is refused when it is
// submitted, with the rule it breaks, instead of passing the vote and
// failing when executed. The authority is checked by the msg server.
// The error is ErrInvalidParams, as the msg server's own refusal is: a
// plain error reached clients as codespace "undefined", code 1 (found by
// make test-sim; TestInvalidParamsAreRefusedWithTheirCode).
func (m *MsgUpdateParams) ValidateBasic() error {
	if err := m.Params.Validate(); err != nil {
		return errorsmod.Wrap(ErrInvalidParams, err.Error())
	}
	return nil
}
