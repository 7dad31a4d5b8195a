package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cornus-dev/cornus/engine"
)

func newAttachCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.AttachServiceOptions
	var detachKeys string
	var noStdin, sigProxy bool
	cmd := &cobra.Command{
		Use:   "attach [OPTIONS] SERVICE",
		Short: "Attach local standard input, output, and error streams to a service's running container",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := parseDetachKeys(detachKeys)
			if err != nil {
				return err
			}
			ctx, detach := context.WithCancel(cmd.Context())
			defer detach()
			t, se, err := f.openProject(ctx, s, false, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			o.Service, o.Stdout, o.Stderr = args[0], s.Out, s.Err
			stdinOpen := false
			if t.spec != nil {
				if a, ok := t.spec.Services[o.Service]; ok {
					o.TTY, stdinOpen = a.TTY, a.StdinOpen
				}
			}
			in, inIsFile := s.In.(*os.File)
			if !noStdin && stdinOpen && s.In != nil {
				o.Stdin = &detachReader{r: s.In, keys: keys, detach: detach}
			}
			if o.TTY && o.Stdin != nil && inIsFile && term.IsTerminal(int(in.Fd())) {
				restore, resize, err := sizedTerminal(in, s.Out)
				if err != nil {
					return err
				}
				defer restore()
				o.Resize = resize
			}
			if sigProxy && !o.TTY {
				stop := proxySignals(ctx, se.Engine(), t.name, o.Service)
				defer stop()
			}
			code, err := se.Engine().AttachService(ctx, t.name, o)
			if err != nil || code < 0 {
				return err // detached: the container runs on
			}
			if code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&detachKeys, "detach-keys", "ctrl-p,ctrl-q", "Override the key sequence for detaching from a container")
	fl.IntVar(&o.Index, "index", 1, "Index of the container if the service has several replicas")
	fl.BoolVar(&noStdin, "no-stdin", false, "Do not attach STDIN")
	fl.BoolVar(&sigProxy, "sig-proxy", true, "Proxy all received signals to the process")
	return cmd
}

// parseDetachKeys reads docker's detach key syntax: comma-separated
// keys, each a letter or ctrl-LETTER (ctrl-@ … ctrl-_ as well).
func parseDetachKeys(s string) ([]byte, error) {
	var out []byte
	for k := range strings.SplitSeq(s, ",") {
		switch {
		case len(k) == 1:
			out = append(out, k[0])
		case strings.HasPrefix(k, "ctrl-") && len(k) == 6:
			c := k[5]
			switch {
			case c >= 'a' && c <= 'z':
				out = append(out, c-'a'+1)
			case c >= '@' && c <= '_':
				out = append(out, c-'@')
			default:
				return nil, fmt.Errorf("--detach-keys %q: %q is no key", s, k)
			}
		default:
			return nil, fmt.Errorf("--detach-keys %q: %q is no key (a letter or ctrl-LETTER)", s, k)
		}
	}
	return out, nil
}

// detachReader passes stdin through until the detach keys are typed in a
// row, then detaches (the keys themselves are not sent).
type detachReader struct {
	r       io.Reader
	keys    []byte
	matched int
	detach  func()
}

func (d *detachReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if len(d.keys) == 0 {
		return n, err
	}
	out := p[:0]
	for _, b := range p[:n] {
		if b == d.keys[d.matched] {
			d.matched++
			if d.matched == len(d.keys) {
				d.detach()
				return len(out), io.EOF
			}
			continue
		}
		out = append(out, d.keys[:d.matched]...) // a partial match was input after all
		d.matched = 0
		if b == d.keys[0] {
			d.matched = 1
			continue
		}
		out = append(out, b)
	}
	return copy(p, bytes.Clone(out)), err
}

// proxySignals sends SIGINT and SIGTERM this process gets to the
// service's container, as docker attach --sig-proxy does.
func proxySignals(ctx context.Context, e interface {
	Kill(context.Context, string, engine.LifecycleOptions) error
}, project, service string) func() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-sigs:
				_ = e.Kill(context.WithoutCancel(ctx), project, engine.LifecycleOptions{Services: []string{service}, Signal: fmt.Sprint(int(sig.(syscall.Signal)))})
			}
		}
	}()
	return func() { signal.Stop(sigs); cancel() }
}
