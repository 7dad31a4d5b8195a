package monitor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TimestampFormat is how Timestamps prefixes a line: Docker's fixed-width
// RFC 3339 with nanoseconds, in UTC.
const TimestampFormat = "2006-01-02T15:04:05.000000000Z07:00"

// LogOptions select output, with backends.LogOptions' semantics.
type LogOptions struct {
	Follow     bool
	Tail       int // entries from the end of both generations; < 0: all; 0: only new ones
	Since      time.Time
	Until      time.Time
	Timestamps bool
	Stdout     io.Writer // nil: stdout is discarded
	Stderr     io.Writer // nil: stderr goes to Stdout
}

// Logs copies a container's output from its record directory: the old
// generation, then the current one. With Follow it keeps copying new
// lines, across rotations, until the container has exited for good (the
// monitor writes the final record after the last line), its monitor is
// gone, Until passes or ctx ends (ctx.Err()).
func Logs(ctx context.Context, dir string, o LogOptions) error {
	if _, err := ReadRecord(dir); err != nil {
		return err
	}
	sink := logSink{o: o, stdout: o.Stdout, stderr: o.Stderr}
	if sink.stderr == nil {
		sink.stderr = o.Stdout
	}
	old, cur, err := openGenerations(dir)
	if err != nil {
		return err
	}
	stop, err := sink.history(old, cur, o.Tail)
	old.close()
	if err != nil || stop || !o.Follow {
		cur.close()
		return err
	}
	f := follower{path: filepath.Join(dir, logName), cur: cur}
	defer f.close()
	return f.run(ctx, dir, &sink)
}

// openGenerations opens the current log before the old one: a rotation in
// between then shows as both being the same file, and is retried.
func openGenerations(dir string) (old, cur *entryReader, err error) {
	for range 3 {
		if cur, err = openEntries(filepath.Join(dir, logName)); err != nil {
			return nil, nil, err
		}
		if old, err = openEntries(filepath.Join(dir, rotatedName)); err != nil {
			cur.close()
			return nil, nil, err
		}
		if cur == nil || old == nil || !sameFile(old.f, cur.f) {
			return old, cur, nil
		}
		old.close()
		cur.close()
	}
	return nil, nil, fmt.Errorf("read container log in %s: it keeps rotating", dir)
}

// history writes the entries already written, the last tail of them when
// tail >= 0. Tail counts entries before Since and stream selection apply,
// as Docker's does.
func (s *logSink) history(old, cur *entryReader, tail int) (stop bool, err error) {
	if tail < 0 {
		for _, r := range []*entryReader{old, cur} {
			if stop, err := r.drain(s.emit); stop || err != nil {
				return stop, err
			}
		}
		return false, nil
	}
	if tail == 0 {
		// Skip to the end of the current generation for Follow.
		_, err := cur.drain(func([]byte) (bool, error) { return false, nil })
		return false, err
	}
	// A ring of the last tail lines: next is where the oldest one sits.
	ring := make([][]byte, 0, min(tail, 1024))
	next := 0
	keep := func(line []byte) (bool, error) {
		if len(ring) < tail {
			ring = append(ring, line)
		} else {
			ring[next] = line
			next = (next + 1) % tail
		}
		return false, nil
	}
	for _, r := range []*entryReader{old, cur} {
		if _, err := r.drain(keep); err != nil {
			return false, err
		}
	}
	for i := range ring {
		if stop, err := s.emit(ring[(next+i)%len(ring)]); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

type logSink struct {
	o              LogOptions
	stdout, stderr io.Writer
}

// emit writes one JSON line's entry; stop is true past Until.
func (s *logSink) emit(line []byte) (stop bool, err error) {
	var e logEntry
	if json.Unmarshal(line, &e) != nil {
		return false, nil // not ours: skip rather than fail the whole read
	}
	if !s.o.Since.IsZero() && e.Time.Before(s.o.Since) {
		return false, nil
	}
	if !s.o.Until.IsZero() && e.Time.After(s.o.Until) {
		return true, nil
	}
	w := s.stdout
	if e.Stream == StreamStderr {
		w = s.stderr
	}
	if w == nil {
		return false, nil
	}
	text := e.Log
	if s.o.Timestamps {
		text = e.Time.UTC().Format(TimestampFormat) + " " + text
	}
	if _, err := io.WriteString(w, text); err != nil {
		return true, fmt.Errorf("write container log: %w", err)
	}
	return false, nil
}

// entryReader reads whole JSON lines from a log file that may still grow:
// a line without its newline yet is kept for the next drain.
type entryReader struct {
	f       *os.File
	r       *bufio.Reader
	partial []byte
}

// openEntries opens path, or returns nil if it does not exist.
func openEntries(path string) (*entryReader, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read container log: %w", err)
	}
	return &entryReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

func (r *entryReader) close() {
	if r != nil {
		r.f.Close()
	}
}

// drain passes each complete line to fn until the end of the file so far
// (nil reader: nothing) or until fn says stop.
func (r *entryReader) drain(fn func(line []byte) (bool, error)) (stop bool, err error) {
	if r == nil {
		return false, nil
	}
	for {
		chunk, err := r.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.partial = append(r.partial, chunk...)
			continue
		}
		if errors.Is(err, io.EOF) {
			r.partial = append(r.partial, chunk...)
			return false, nil
		}
		if err != nil {
			return true, fmt.Errorf("read container log: %w", err)
		}
		line := chunk
		if len(r.partial) > 0 {
			// The partial line's buffer takes the rest of the line.
			line = r.partial
			r.partial = nil
			line = append(line, chunk...)
		} else {
			line = append([]byte(nil), chunk...) // ReadSlice's buffer is reused
		}
		if stop, err := fn(line); stop || err != nil {
			return stop, err
		}
	}
}

func sameFile(a, b *os.File) bool {
	sa, err1 := a.Stat()
	sb, err2 := b.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
