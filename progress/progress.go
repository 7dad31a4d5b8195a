package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Event is one state change of a resource.
type Event struct {
	Kind   string // Container, Network, Volume, Image, Project (waiting for its lock)
	ID     string // resource name
	Status string // Creating, Created, Starting, Started, Waiting, Healthy, Stopping, Stopped, Removing, Removed, Pulling, Pulled, Running, Recreate, Locked, Error
	Text   string // detail (e.g. an error or pull progress)
	Done   bool   // the resource reached a final state for this operation
	Err    bool
}

// Writer receives events. Implementations are safe for concurrent use.
type Writer interface {
	Event(e Event)
	// Close flushes and stops rendering; call it before printing anything
	// else to the same terminal.
	Close()
}

// Modes of New.
const (
	ModeAuto  = "auto"
	ModeTTY   = "tty"
	ModePlain = "plain"
	ModeJSON  = "json"
	ModeQuiet = "quiet"
)

// New returns a renderer for mode; auto picks tty when isTTY.
func New(mode string, w io.Writer, isTTY bool, title string) (Writer, error) {
	switch mode {
	case "", ModeAuto:
		if isTTY {
			return newTTY(w, title), nil
		}
		return &plain{w: w}, nil
	case ModeTTY:
		return newTTY(w, title), nil
	case ModePlain:
		return &plain{w: w}, nil
	case ModeJSON:
		return &jsonLines{enc: json.NewEncoder(w)}, nil
	case ModeQuiet:
		return Discard, nil
	}
	return nil, fmt.Errorf("--progress %q: use auto, tty, plain, json or quiet", mode)
}

// Discard drops every event.
var Discard Writer = discard{}

type discard struct{}

func (discard) Event(Event) {}
func (discard) Close()      {}

// plain prints one line per event: " Container shop-web-1  Started".
type plain struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plain) Event(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf(" %s %s  %s", e.Kind, e.ID, e.Status)
	if e.Text != "" {
		line += " " + e.Text
	}
	fmt.Fprintln(p.w, line)
}

func (p *plain) Close() {}

// jsonLines prints one JSON object per event.
type jsonLines struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (j *jsonLines) Event(e Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = j.enc.Encode(struct {
		ID     string `json:"id"`
		Kind   string `json:"kind"`
		Status string `json:"status"`
		Text   string `json:"text,omitempty"`
		Done   bool   `json:"done,omitempty"`
		Error  bool   `json:"error,omitempty"`
		Time   string `json:"time"`
	}{e.ID, e.Kind, e.Status, e.Text, e.Done, e.Err, time.Now().UTC().Format(time.RFC3339Nano)})
}

func (j *jsonLines) Close() {}

// tty redraws a block of lines in place, one per resource, with a spinner
// while in progress and the elapsed time, like docker compose.
type tty struct {
	mu      sync.Mutex
	w       io.Writer
	title   string
	order   []string
	rows    map[string]*row
	drawn   int
	start   time.Time
	stop    chan struct{}
	stopped chan struct{}
	frame   int
}

type row struct {
	e       Event
	started time.Time
	ended   time.Time
}

func newTTY(w io.Writer, title string) *tty {
	t := &tty{w: w, title: title, rows: map[string]*row{}, start: time.Now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	go t.loop()
	return t
}

func (t *tty) Event(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := e.Kind + " " + e.ID
	r, ok := t.rows[key]
	if !ok {
		r = &row{started: time.Now()}
		t.rows[key] = r
		t.order = append(t.order, key)
	}
	r.e = e
	if e.Done {
		r.ended = time.Now()
	} else {
		r.ended = time.Time{}
	}
}

func (t *tty) loop() {
	defer close(t.stopped)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			t.draw()
			return
		case <-tick.C:
			t.draw()
		}
	}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (t *tty) draw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.order) == 0 {
		return
	}
	t.frame++
	var b strings.Builder
	if t.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", t.drawn)
	}
	done := 0
	for _, k := range t.order {
		if t.rows[k].e.Done {
			done++
		}
	}
	fmt.Fprintf(&b, "\x1b[2K[+] %s %d/%d\n", t.title, done, len(t.order))
	for _, k := range t.order {
		r := t.rows[k]
		mark := spinner[t.frame%len(spinner)]
		switch {
		case r.e.Err:
			mark = "\x1b[31m✘\x1b[0m"
		case r.e.Done:
			mark = "\x1b[32m✔\x1b[0m"
		}
		end := r.ended
		if end.IsZero() {
			end = time.Now()
		}
		text := r.e.Status
		if r.e.Text != "" {
			text += " " + r.e.Text
		}
		fmt.Fprintf(&b, "\x1b[2K %s %-40s %-24s %5.1fs\n", mark, k, text, end.Sub(r.started).Seconds())
	}
	t.drawn = len(t.order) + 1
	_, _ = io.WriteString(t.w, b.String())
}

func (t *tty) Close() {
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	<-t.stopped
}

type ctxKey struct{}

// WithWriter returns ctx carrying w: work done under it reports to w
// instead of the doer's own writer (a server streams each request's
// progress back to its client).
func WithWriter(ctx context.Context, w Writer) context.Context {
	return context.WithValue(ctx, ctxKey{}, w)
}

// From returns the writer ctx carries, else def.
func From(ctx context.Context, def Writer) Writer {
	if w, ok := ctx.Value(ctxKey{}).(Writer); ok {
		return w
	}
	return def
}
