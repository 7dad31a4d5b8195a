package monitor

import (
	"context"
	"os"
	"time"
)

// follower reads container.log as it grows and moves to the new file
// when the monitor rotates it.
type follower struct {
	path string
	cur  *entryReader // nil until container.log exists
}

func (f *follower) close() { f.cur.close() }

func (f *follower) run(ctx context.Context, dir string, sink *logSink) error {
	w := watchDir(dir, logChanges)
	defer w.stop()
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	var until <-chan time.Time
	if !sink.o.Until.IsZero() {
		t := time.NewTimer(time.Until(sink.o.Until))
		defer t.Stop()
		until = t.C
	}
	last := false
	for {
		// Look at the record before reading: once it is final the monitor
		// has written its last line, so the read after it is the last one.
		last = last || ended(dir)
		if stop, err := f.drain(sink); stop || err != nil {
			return err
		}
		if last {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.C:
		case <-tick.C:
		case <-until:
			last = true
		}
	}
}

// ended reports whether no more output will come: the record is final or
// gone, or no monitor supervises the container.
func ended(dir string) bool {
	r, err := ReadRecord(dir)
	return err != nil || r.Final() || !AliveIn(dir, r)
}

// drain copies what was written since the last call, following a
// rotation: once renamed, the old file gets no more writes, so it is read
// to its end before the new one is opened.
func (f *follower) drain(sink *logSink) (stop bool, err error) {
	for {
		if f.cur == nil {
			if f.cur, err = openEntries(f.path); f.cur == nil || err != nil {
				return err != nil, err
			}
		}
		if stop, err := f.cur.drain(sink.emit); stop || err != nil {
			return stop, err
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return false, nil // between rename and create: next time
		}
		if cst, err := f.cur.f.Stat(); err == nil && os.SameFile(st, cst) {
			return false, nil
		}
		if stop, err := f.cur.drain(sink.emit); stop || err != nil {
			return stop, err
		}
		f.cur.close()
		f.cur = nil
	}
}
