package keeper

import "context"

// MigrateParticipantsTo4 exposes the participants' part of Migrate3to4 to
// tests until the integrator wires it into Migrate3to4.
func (m Migrator) MigrateParticipantsTo4(ctx context.Context) error {
	return m.migrateParticipantsTo4(ctx)
}
