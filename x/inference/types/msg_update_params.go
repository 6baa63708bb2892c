package types

import "fmt"

// ValidateBasic checks the proposed parameters without state, so that a
// governance proposal carrying invalid ones is refused when it is
// submitted, with the rule it breaks, instead of passing the vote and
// failing when executed. The authority is checked by the msg server.
func (m *MsgUpdateParams) ValidateBasic() error {
	if err := m.Params.Validate(); err != nil {
		return fmt.Errorf("invalid params: %w", err)
	}
	return nil
}
