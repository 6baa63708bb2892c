//go:build unix

package monitor

import "syscall"

// fdLimit is this process's open-file limit (Go raises the soft limit to
// the hard one at start-up), 0 if unknown.
func fdLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return int(min(l.Cur, 1<<30))
}
