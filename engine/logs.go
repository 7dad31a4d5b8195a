package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/backends"
)

// LogsOptions select and format a project's logs.
type LogsOptions struct {
	Services   []string
	Follow     bool
	Tail       int // lines per container from the end; < 0 means all
	Since      time.Time
	Until      time.Time
	Timestamps bool
	NoPrefix   bool
	Color      bool // color the prefixes (on a terminal)
	Index      int  // one replica of each service (1-based); 0: all
	Out        io.Writer
}

// Logs writes every selected container's output to o.Out, each line
// prefixed with the container's short name ("web-1  | ").
func (e *Engine) Logs(ctx context.Context, project string, o LogsOptions) error {
	cs, err := e.selected(ctx, project, o.Services, true)
	if err != nil {
		return err
	}
	if o.Index > 0 {
		cs = slices.DeleteFunc(cs, func(c backends.Container) bool { return c.Replica() != strconv.Itoa(o.Index) })
	}
	mux := newLogMux(o.Out, cs, project, o.NoPrefix, o.Color)
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range cs {
		g.Go(func() error {
			w := mux.writer(c)
			defer w.flush()
			err := e.b.Logs(gctx, c.ID, backends.LogOptions{
				Follow: o.Follow, Tail: o.Tail, Since: o.Since, Until: o.Until, Timestamps: o.Timestamps,
				Stdout: w, Stderr: w,
			})
			if err != nil && gctx.Err() == nil {
				return fmt.Errorf("logs of %s: %w", c.Name, err)
			}
			return nil
		})
	}
	err = g.Wait()
	if ctx.Err() != nil {
		return nil // interrupted follow
	}
	return err
}

// AttachOptions configure Attach.
type AttachOptions struct {
	Services   []string
	Color      bool
	Timestamps bool // each line prefixed with its time (up --timestamps)
	NoPrefix   bool // no "web-1 | " prefix (up --no-log-prefix)
	Out        io.Writer
}

// Attach streams the output of a project's containers from their start
// and reports each exit ("web-1 exited with code 0"), until all have
// exited or ctx ends: foreground `up`. The containers that exited already
// are attached too: a short-lived one the up just started may be done
// before the attach begins (docker compose attaches before it starts
// them), and its output and exit are still this up's (CI47, incus through
// a server: quick-1 had exited, and was missing from the output).
func (e *Engine) Attach(ctx context.Context, project string, o AttachOptions) error {
	cs, err := e.selected(ctx, project, o.Services, true)
	if err != nil {
		return err
	}
	// One never started has no output and no exit to wait for.
	cs = slices.DeleteFunc(cs, func(c backends.Container) bool { return c.State == backends.StateCreated })
	mux := newLogMux(o.Out, cs, project, o.NoPrefix, o.Color)
	if len(cs) > 0 {
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = shortName(c, project)
		}
		mux.line("Attaching to " + strings.Join(names, ", ") + "\n")
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Waited for from the start, beside the logs: the exit is read
			// when it happens, not after what follows it (an abort's stop
			// removing the pod it was on: CI37, CI38).
			exited := make(chan int, 1)
			waited := make(chan struct{})
			go func() {
				defer close(waited)
				if code, err := e.b.Wait(ctx, c.ID); err == nil {
					exited <- code
				}
			}()
			w := mux.writer(c)
			_ = e.b.Logs(ctx, c.ID, backends.LogOptions{Follow: true, Tail: -1, Timestamps: o.Timestamps, Stdout: w, Stderr: w})
			w.flush()
			if ctx.Err() != nil {
				return
			}
			<-waited
			select {
			case code := <-exited:
				mux.line(fmt.Sprintf("%s exited with code %d\n", shortName(c, project), code))
			default:
			}
		}()
	}
	wg.Wait()
	return nil
}

// shortName is a container's name without its project's: "web-1".
func shortName(c backends.Container, project string) string {
	return strings.TrimPrefix(c.Name, project+"-")
}

// logMux serializes whole lines from many containers onto one writer.
type logMux struct {
	mu     sync.Mutex
	out    io.Writer
	width  int
	prefix map[string]string
	plain  bool
}

var palette = []string{"36", "33", "32", "35", "34", "96", "93", "92", "95", "94"}

func newLogMux(out io.Writer, cs []backends.Container, project string, noPrefix, color bool) *logMux {
	m := &logMux{out: out, prefix: map[string]string{}, plain: noPrefix}
	for _, c := range cs {
		m.width = max(m.width, len(shortName(c, project)))
	}
	apps := map[string]int{}
	for _, c := range cs {
		if _, ok := apps[c.App()]; !ok {
			apps[c.App()] = len(apps)
		}
	}
	for _, c := range cs {
		p := fmt.Sprintf("%-*s | ", m.width, shortName(c, project))
		if color {
			p = "\x1b[" + palette[apps[c.App()]%len(palette)] + "m" + p + "\x1b[0m"
		}
		m.prefix[c.ID] = p
	}
	return m
}

func (m *logMux) line(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _ = io.WriteString(m.out, s)
}

func (m *logMux) writer(c backends.Container) *lineWriter {
	p := m.prefix[c.ID]
	if m.plain {
		p = ""
	}
	return &lineWriter{mux: m, prefix: p}
}

// lineWriter buffers a container's partial lines and emits whole prefixed
// lines, so output of different containers never interleaves mid-line.
type lineWriter struct {
	mux    *logMux
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.mux.line(w.prefix + string(w.buf[:i+1]))
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.mux.line(w.prefix + string(w.buf) + "\n")
		w.buf = nil
	}
}
