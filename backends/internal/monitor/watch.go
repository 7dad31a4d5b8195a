package monitor

import "time"

// watchFor says which changes wake a watcher.
type watchFor int

const (
	recordChanges watchFor = iota // record.json replaced (Wait)
	logChanges                    // that, or a log written or rotated (Logs)
)

// dirWatch signals on C (nil: never) when a record directory may have
// changed; a watcher also looks every poll regardless.
type dirWatch struct {
	C    <-chan struct{}
	poll time.Duration
	stop func()
}

// pollOnly is the fallback when the kernel cannot notify: reading a small
// record five times a second is cheap, and only a waiting CLI does it.
func pollOnly() *dirWatch {
	return &dirWatch{poll: 200 * time.Millisecond, stop: func() {}}
}
