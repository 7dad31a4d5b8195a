package builder

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/progress/progressui"
)

// display shows every build of one run in one BuildKit progress display,
// as docker compose does: each solve's status goes through its own
// channel into the display's, its steps named after the service when
// several build at once ("[web 2/3] RUN ...").
// BuildKit's display starts with the first solve; a builder that is not
// BuildKit (podman's) writes its text lines through text.
type display struct {
	ctx     context.Context
	mode    progressui.DisplayMode
	out     io.Writer
	prefix  bool
	start   sync.Once
	started bool // run ran (set under start)
	all     chan *bkclient.SolveStatus
	forward sync.WaitGroup
	done    chan error
	textMu  sync.Mutex
}

// Progress modes, as docker compose --progress names them.
var progressModes = map[string]progressui.DisplayMode{
	"": progressui.AutoMode, "auto": progressui.AutoMode, "tty": progressui.TtyMode,
	"plain": progressui.PlainMode, "json": progressui.RawJSONMode, "quiet": progressui.QuietMode,
}

func newDisplay(ctx context.Context, mode string, out io.Writer, prefix bool) (*display, error) {
	m, ok := progressModes[mode]
	if !ok {
		return nil, fmt.Errorf("progress %q: use auto, tty, plain, json or quiet", mode)
	}
	if out == nil {
		out, m = io.Discard, progressui.QuietMode
	}
	if m == progressui.TtyMode {
		// Refuse a tty display on no terminal now, not at the first solve.
		if _, err := progressui.NewDisplay(out, m); err != nil {
			return nil, fmt.Errorf("progress %s: %w", mode, err)
		}
	}
	return &display{ctx: ctx, mode: m, out: out, prefix: prefix, all: make(chan *bkclient.SolveStatus), done: make(chan error, 1)}, nil
}

// run starts BuildKit's display.
func (d *display) run() {
	d.started = true
	ui, err := progressui.NewDisplay(d.out, d.mode)
	if err != nil {
		d.done <- err
		go func() { // drain, so solves never block on a display that failed
			for range d.all {
			}
		}()
		return
	}
	go func() {
		// The display outlives a cancelled build long enough to show why.
		_, err := ui.UpdateFrom(context.WithoutCancel(d.ctx), d.all)
		d.done <- err
	}()
}

// channel is a solve's status channel (the solve closes it).
func (d *display) channel(service string) chan *bkclient.SolveStatus {
	d.start.Do(d.run)
	ch := make(chan *bkclient.SolveStatus)
	d.forward.Add(1)
	go func() {
		defer d.forward.Done()
		for st := range ch {
			if d.prefix {
				named(st, service)
			}
			d.all <- st
		}
	}()
	return ch
}

// text shows one line of a builder that is not BuildKit.
func (d *display) text(service, line string) {
	if d.mode == progressui.QuietMode {
		return
	}
	d.textMu.Lock()
	defer d.textMu.Unlock()
	if d.mode == progressui.RawJSONMode {
		b, _ := json.Marshal(struct {
			Service string `json:"service"`
			Stream  string `json:"stream"`
		}{service, line})
		fmt.Fprintf(d.out, "%s\n", b)
		return
	}
	fmt.Fprintf(d.out, "[%s] %s\n", service, line)
}

// wait ends the display once every solve has ended.
func (d *display) wait() error {
	d.start.Do(func() {}) // no solve starts the display after this
	if !d.started {
		return nil
	}
	d.forward.Wait()
	close(d.all)
	return <-d.done
}

// named puts the service's name into the status's step names.
func named(st *bkclient.SolveStatus, service string) {
	for _, v := range st.Vertexes {
		if rest, ok := strings.CutPrefix(v.Name, "["); ok {
			v.Name = "[" + service + " " + rest
		} else {
			v.Name = "[" + service + "] " + v.Name
		}
	}
}

// Replay shows, in this process's display, the progress lines a build
// elsewhere wrote with Progress "json" (a server's, for its client):
// BuildKit's status objects and builders' text lines.
type Replay struct {
	d  *display
	ch chan *bkclient.SolveStatus
}

// NewReplay starts a display in mode on out.
func NewReplay(ctx context.Context, mode string, out io.Writer) (*Replay, error) {
	d, err := newDisplay(ctx, mode, out, false)
	if err != nil {
		return nil, err
	}
	return &Replay{d: d}, nil
}

// Line shows one progress line.
func (r *Replay) Line(raw []byte) {
	var text struct {
		Service string `json:"service"`
		Stream  string `json:"stream"`
	}
	if json.Unmarshal(raw, &text) == nil && text.Service != "" {
		r.d.text(text.Service, text.Stream)
		return
	}
	var st bkclient.SolveStatus
	if json.Unmarshal(raw, &st) != nil {
		return
	}
	if r.ch == nil {
		r.ch = r.d.channel("")
	}
	r.ch <- &st
}

// Close ends the display.
func (r *Replay) Close() error {
	if r.ch != nil {
		close(r.ch)
	}
	return r.d.wait()
}
