//go:build linux

package egress

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuClock reads the CPU time of one OS thread: the evaluating
// goroutine's, locked to it, so time the thread waits for a core does not
// count against a decision.
type cpuClock struct{ id int32 }

// threadCPUClock is the calling thread's CPU clock, readable from any
// thread: Linux's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), the clock
// pthread_getcpuclockid gives, which needs no cgo.
func threadCPUClock() cpuClock {
	return cpuClock{id: int32(^uint32(unix.Gettid())<<3 | 6)}
}

// now is the thread's CPU time so far; ok is false when it cannot be read
// (the caller then counts real time).
func (c cpuClock) now() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(c.id, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
