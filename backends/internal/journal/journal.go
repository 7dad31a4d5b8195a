package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// MaxBytes is where the journal rotates.
const MaxBytes = 4 << 20

// maxLine bounds one entry read back.
const maxLine = 64 << 10

// pollEvery is how often Follow looks for new entries.
const pollEvery = 100 * time.Millisecond

// Event is one entry; its fields mirror backends.Event.
type Event struct {
	Time     time.Time         `json:"time"`
	Action   string            `json:"action"`
	ID       string            `json:"id"`
	Name     string            `json:"name,omitempty"`
	Image    string            `json:"image,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	ExitCode *int              `json:"exitCode,omitempty"`
}

// Journal is events.jsonl (and events.jsonl.1) in a directory.
type Journal struct{ dir string }

// Open returns the journal in dir (created on the first Append).
func Open(dir string) *Journal { return &Journal{dir: dir} }

func (j *Journal) path() string    { return filepath.Join(j.dir, "events.jsonl") }
func (j *Journal) rotated() string { return filepath.Join(j.dir, "events.jsonl.1") }

// Append writes e (its Time set now when zero). Writers in several
// processes serialize on a lock file; one entry is one write.
func (j *Journal) Append(e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("event journal: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(j.dir, "events.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("event journal: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("event journal: %w", err)
	}
	if st, err := os.Stat(j.path()); err == nil && st.Size()+int64(len(line)) > MaxBytes {
		if err := os.Rename(j.path(), j.rotated()); err != nil {
			return fmt.Errorf("event journal: rotate: %w", err)
		}
	}
	f, err := os.OpenFile(j.path(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("event journal: %w", err)
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("event journal: %w", err)
	}
	return nil
}

// Follow calls fn for every event from since on (history first, then
// live ones as they are appended) until ctx ends, until passes (when
// set) or fn returns false. ready, if set, is called once the history was
// read: every event appended after that is delivered.
func (j *Journal) Follow(ctx context.Context, since, until time.Time, ready func(), fn func(Event) bool) error {
	var cur position
	for _, p := range []string{j.rotated(), j.path()} {
		pos, more, err := scan(p, position{}, since, until, fn)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		cur = pos
	}
	if ready != nil {
		ready()
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if !until.IsZero() && time.Now().After(until) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ino := inode(j.path())
		if cur.ino != 0 && ino != cur.ino {
			// Rotated: finish the old generation, then start the new one.
			if inode(j.rotated()) == cur.ino {
				if _, more, err := scan(j.rotated(), cur, since, until, fn); err != nil || !more {
					return err
				}
			}
			cur = position{}
		}
		pos, more, err := scan(j.path(), cur, since, until, fn)
		if err != nil || !more {
			return err
		}
		cur = pos
	}
}

// position is how far a file was read.
type position struct {
	ino uint64
	off int64
}

func inode(p string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(p, &st) != nil {
		return 0
	}
	return st.Ino
}

// scan reads complete lines of p from pos on; more is false once fn
// declined or an event passed until.
func scan(p string, pos position, since, until time.Time, fn func(Event) bool) (position, bool, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return position{}, true, nil
	}
	if err != nil {
		return pos, false, fmt.Errorf("event journal: %w", err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return pos, false, err
	}
	if pos.ino != st.Ino {
		pos = position{ino: st.Ino}
	}
	if _, err := f.Seek(pos.off, io.SeekStart); err != nil {
		return pos, false, err
	}
	r := bufio.NewReaderSize(f, 32<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An oversized line (never written by Append): skip it.
			for errors.Is(err, bufio.ErrBufferFull) {
				pos.off += int64(len(line))
				line, err = r.ReadSlice('\n')
			}
			pos.off += int64(len(line))
			continue
		}
		if err != nil {
			return pos, true, nil // a partial last line waits for its newline
		}
		pos.off += int64(len(line))
		if len(line) > maxLine {
			continue
		}
		var e Event
		if json.Unmarshal(bytes.TrimSpace(line), &e) != nil {
			continue
		}
		if !until.IsZero() && e.Time.After(until) {
			return pos, false, nil
		}
		if !since.IsZero() && e.Time.Before(since) {
			continue
		}
		if !fn(e) {
			return pos, false, nil
		}
	}
}
