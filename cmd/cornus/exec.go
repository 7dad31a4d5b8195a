package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
)

func newExecCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.ExecOptions
	var noTTY, detach, agent bool
	cmd := &cobra.Command{
		Use:   "exec [OPTIONS] SERVICE COMMAND [ARGS...]",
		Short: "Execute a command in a running container",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			if agent {
				stop, err := se.ForwardAgent(ctx, t.name)
				if err != nil {
					return err
				}
				defer stop()
			}
			o.Service, o.Cmd = args[0], args[1:]
			o.Stdout, o.Stderr = s.Out, s.Err
			if !detach {
				o.Stdin = s.In
			}
			in, inIsTTY := s.In.(*os.File)
			o.TTY = !noTTY && !detach && inIsTTY && term.IsTerminal(int(in.Fd())) && isTerminal(s.Out)
			if o.TTY {
				restore, size, resize, err := rawTerminal(in, s.Out.(*os.File))
				if err != nil {
					return err
				}
				defer restore()
				o.Size, o.Resize = size, resize
			}
			if detach {
				o.Stdout, o.Stderr = io.Discard, io.Discard
			}
			code, err := se.Engine().Exec(ctx, t.name, o)
			if err != nil {
				return err
			}
			if code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false) // flags after SERVICE belong to the command
	fl.BoolVarP(&noTTY, "no-TTY", "T", false, "Disable pseudo-TTY allocation (default: a TTY when attached to one)")
	fl.BoolVarP(&detach, "detach", "d", false, "Run the command in the background")
	fl.StringVarP(&o.User, "user", "u", "", "Run the command as this user")
	fl.StringVarP(&o.WorkingDir, "workdir", "w", "", "Working directory for the command")
	fl.StringArrayVarP(&o.Env, "env", "e", nil, "Set environment variables")
	fl.IntVar(&o.Index, "index", 1, "Index of the container if the service has several replicas")
	fl.BoolVar(&o.Privileged, "privileged", false, "Give extended privileges to the process")
	fl.BoolVar(&agent, "forward-agent", false, "Relay your ssh-agent (SSH_AUTH_SOCK) into the command (remote-mode deployments of a cornus server)")
	return cmd
}

// rawTerminal puts the terminal in raw mode and reports its size now and
// on every SIGWINCH.
func rawTerminal(in, out *os.File) (restore func(), size *backends.TermSize, resize <-chan backends.TermSize, err error) {
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, nil, nil, err
	}
	current := func() *backends.TermSize {
		w, h, err := term.GetSize(int(out.Fd()))
		if err != nil {
			return nil
		}
		return &backends.TermSize{Height: uint(h), Width: uint(w)}
	}
	ch := make(chan backends.TermSize, 1)
	winch, stopWinch := resizes()
	done := make(chan struct{})
	first := current()
	go func() {
		var last backends.TermSize
		if first != nil {
			last = *first
		}
		for {
			select {
			case <-winch:
				if sz := current(); sz != nil && *sz != last {
					last = *sz
					select {
					case ch <- *sz:
					default:
					}
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		stopWinch()
		close(done)
		_ = term.Restore(int(in.Fd()), state)
	}, first, ch, nil
}
