package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/compose"
)

// runFlags are compose run's flags.
type runFlags struct {
	o                                       clientdeploy.RunOptions
	ov                                      compose.RunOverrides
	entrypoint                              string
	noTTY, tty, interactive, build, noBuild bool
}

func newRunCmd(f *composeFlags, s streams) *cobra.Command {
	rf := &runFlags{}
	o, ov := &rf.o, &rf.ov
	cmd := &cobra.Command{
		Use:   "run [OPTIONS] SERVICE [COMMAND] [ARGS...]",
		Short: "Run a one-off command on a service",
		Long: "Run a one-off container of a service: its dependencies are started first (unless --no-deps), " +
			"its ports are not published (unless --service-ports or -p), and the command's exit code is run's.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			in, inIsFile := s.In.(*os.File)
			ov.Service, o.Service = args[0], args[0]
			if len(args) > 1 {
				ov.Command = args[1:]
			}
			if cmd.Flags().Changed("entrypoint") {
				ov.Entrypoint = &rf.entrypoint
			}
			ov.Interactive = rf.interactive && !o.Detach
			ov.TTY = !rf.noTTY && !o.Detach && (rf.tty || inIsFile && term.IsTerminal(int(in.Fd())) && isTerminal(s.Out))
			ov.Environ = s.Environ
			r, err := f.loadModified(ctx, s, ov.Apply)
			if err != nil {
				return err
			}
			se, err := openSession(ctx, s, f.server, r.Dir, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			if o.Build, err = buildPolicy(rf.build, rf.noBuild); err != nil {
				return err
			}
			o.Stdout, o.Stderr = s.Out, s.Err
			if ov.Interactive {
				o.Stdin = s.In
			}
			if ov.TTY && inIsFile {
				restore, resize, err := sizedTerminal(in, s.Out)
				if err != nil {
					return err
				}
				defer restore()
				o.Resize = resize
			}
			if o.Detach {
				o.Stdout, o.Stderr = io.Discard, io.Discard
			}
			res, err := se.Run(ctx, r.Project, *o)
			if err != nil {
				return composeFieldNames(err)
			}
			if o.Detach {
				fmt.Fprintln(s.Out, res.Name)
				return nil
			}
			if res.ExitCode != 0 {
				return exitError{code: res.ExitCode}
			}
			return nil
		},
	}
	rf.register(cmd.Flags())
	return cmd
}

func (rf *runFlags) register(fl *pflag.FlagSet) {
	o, ov := &rf.o, &rf.ov
	fl.SetInterspersed(false) // flags after SERVICE belong to the command
	fl.BoolVarP(&o.Detach, "detach", "d", false, "Run the container in the background and print its name")
	fl.BoolVar(&o.Remove, "rm", false, "Remove the container when it exits")
	fl.StringVar(&o.Name, "name", "", "Assign a name to the container")
	fl.BoolVar(&o.NoDeps, "no-deps", false, "Do not start linked services")
	fl.BoolVar(&o.UseAliases, "use-aliases", false, "Use the service's network aliases in the network(s) the container connects to")
	fl.StringArrayVarP(&ov.Env, "env", "e", nil, "Set environment variables")
	fl.StringArrayVarP(&ov.Labels, "label", "l", nil, "Add or override a label")
	fl.StringArrayVarP(&ov.Volumes, "volume", "v", nil, "Bind mount a volume")
	fl.StringArrayVarP(&ov.Publish, "publish", "p", nil, "Publish a container's port(s) to the host")
	fl.BoolVarP(&ov.ServicePorts, "service-ports", "P", false, "Run with the service's ports enabled and mapped to the host")
	fl.StringVar(&rf.entrypoint, "entrypoint", "", "Override the entrypoint of the image")
	fl.StringVarP(&ov.WorkingDir, "workdir", "w", "", "Working directory inside the container")
	fl.StringVarP(&ov.User, "user", "u", "", "Run as this user (name or uid[:gid])")
	fl.BoolVarP(&rf.noTTY, "no-TTY", "T", false, "Disable pseudo-TTY allocation (default: a TTY when attached to one)")
	fl.BoolVarP(&rf.tty, "tty", "t", false, "Allocate a pseudo-TTY")
	fl.BoolVarP(&rf.interactive, "interactive", "i", true, "Keep STDIN open even if not attached")
	fl.BoolVar(&rf.build, "build", false, "Build the image before starting the container")
	fl.BoolVar(&rf.noBuild, "no-build", false, "Do not build a missing image")
}

// sizedTerminal puts in in raw mode, when out is a terminal too, and
// returns its sizes: the current one first, so the container's TTY takes
// it as soon as it is attached, then each change. Elsewhere it does
// nothing.
func sizedTerminal(in *os.File, out io.Writer) (restore func(), resize <-chan backends.TermSize, err error) {
	f, ok := out.(*os.File)
	if !ok {
		return func() {}, nil, nil
	}
	restore, size, changes, err := rawTerminal(in, f)
	if err != nil {
		return nil, nil, err
	}
	return restore, withFirst(size, changes), nil
}

// withFirst is resize with size sent first.
func withFirst(size *backends.TermSize, resize <-chan backends.TermSize) <-chan backends.TermSize {
	ch := make(chan backends.TermSize, 1)
	if size != nil {
		ch <- *size
	}
	go func() {
		for sz := range resize {
			ch <- sz
		}
	}()
	return ch
}
