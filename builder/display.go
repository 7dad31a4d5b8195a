package builder

import (
	"context"
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
type display struct {
	all     chan *bkclient.SolveStatus
	prefix  bool
	forward sync.WaitGroup
	done    chan error
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
	ui, err := progressui.NewDisplay(out, m)
	if err != nil {
		return nil, fmt.Errorf("progress %s: %w", mode, err)
	}
	d := &display{all: make(chan *bkclient.SolveStatus), prefix: prefix, done: make(chan error, 1)}
	go func() {
		// The display outlives a cancelled build long enough to show why.
		_, err := ui.UpdateFrom(context.WithoutCancel(ctx), d.all)
		d.done <- err
	}()
	return d, nil
}

// channel is a solve's status channel (the solve closes it).
func (d *display) channel(service string) chan *bkclient.SolveStatus {
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

// wait ends the display once every solve has ended.
func (d *display) wait() error {
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
