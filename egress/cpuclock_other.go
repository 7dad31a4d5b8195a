//go:build !linux

package egress

import "time"

// cpuClock is no clock here: a decision's deadline counts real time.
type cpuClock struct{}

func threadCPUClock() cpuClock { return cpuClock{} }

func (cpuClock) now() (time.Duration, bool) { return 0, false }
