package monitor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Stream names in log entries.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// maxLineBytes splits longer lines into partial entries, as Docker does,
// so a process that never writes a newline cannot grow the monitor.
const maxLineBytes = 16 << 10

// logEntry is one line of container.log. Log keeps the line's newline;
// a partial line (flushed at exit, or split at maxLineBytes) has none, so
// the entries concatenate back to the exact output.
type logEntry struct {
	Time   time.Time `json:"time"`
	Stream string    `json:"stream"`
	Log    string    `json:"log"`
}

// logFile appends entries to container.log and rotates it to
// container.log.1 (replacing the older one) when the next entry would
// pass max bytes.
type logFile struct {
	path, rotated string
	max           int64

	mu   sync.Mutex
	f    *os.File
	size int64
	err  error // the first write error; output is dropped after it
}

func openLogFile(path, rotated string, max int64) (*logFile, error) {
	if max <= 0 {
		max = DefaultLogMaxBytes
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open container log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open container log: %w", err)
	}
	return &logFile{path: path, rotated: rotated, max: max, f: f, size: st.Size()}, nil
}

func (l *logFile) write(stream string, t time.Time, text []byte) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep <, >, & readable in the file
	if err := enc.Encode(logEntry{Time: t.UTC(), Stream: stream, Log: string(text)}); err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil || l.err != nil {
		return
	}
	if l.size > 0 && l.size+int64(b.Len()) > l.max {
		if err := l.rotate(); err != nil {
			l.err = err
			return
		}
	}
	n, err := l.f.Write(b.Bytes())
	l.size += int64(n)
	if err != nil {
		l.err = fmt.Errorf("write container log: %w", err)
	}
}

func (l *logFile) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotate container log: %w", err)
	}
	l.f = nil
	if err := os.Rename(l.path, l.rotated); err != nil {
		return fmt.Errorf("rotate container log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("rotate container log: %w", err)
	}
	l.f, l.size = f, 0
	return nil
}

// Close closes the file and returns the first error that made output be
// dropped, if any.
func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		if err := l.f.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.f = nil
	}
	return l.err
}

// lineWriter turns one stream's writes into entries, a line each. It is
// the io.Writer a Task gets; it never fails (see Stdio).
type lineWriter struct {
	stream string
	log    *logFile
	now    func() time.Time

	mu  sync.Mutex
	buf []byte
}

func newLineWriter(stream string, log *logFile) *lineWriter {
	return &lineWriter{stream: stream, log: log, now: time.Now}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	t := w.now()
	rest := w.buf
	for len(rest) > 0 {
		n := bytes.IndexByte(rest, '\n') + 1
		switch {
		case n > 0 && n <= maxLineBytes:
		case len(rest) >= maxLineBytes:
			n = maxLineBytes
		default:
			n = 0
		}
		if n == 0 {
			break
		}
		w.log.write(w.stream, t, rest[:n])
		rest = rest[n:]
	}
	w.buf = append(w.buf[:0], rest...)
	return len(p), nil
}

// Flush writes a pending partial line: the process exited without a
// final newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.log.write(w.stream, w.now(), w.buf)
		w.buf = w.buf[:0]
	}
}
