//go:build !linux

package monitor

import "syscall"

// processStart has no start time to offer without /proc: a live pid
// counts as the monitor (pid reuse goes undetected).
func processStart(pid int) (ticks uint64, running bool, err error) {
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return 0, false, err
	}
	return 0, true, nil
}
