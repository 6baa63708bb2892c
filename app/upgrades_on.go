//go:build !noupgradehandlers

package app

// withUpgradeHandlers: a release binary performs its upgrades. The
// noupgradehandlers build tag makes a binary that knows none, standing in
// for the release before them in the localnet upgrade test.
const withUpgradeHandlers = true
