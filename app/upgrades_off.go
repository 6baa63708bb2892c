//go:build noupgradehandlers

package app

// withUpgradeHandlers is off in a test build that stands in for the release
// before an upgrade (see upgrades_on.go).
const withUpgradeHandlers = false
