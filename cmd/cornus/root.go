package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/cornus-dev/cornus/compose"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/spec"
)

// streams are what a command reads from its process: standard streams,
// environment and working directory, injectable for tests.
type streams struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	Environ []string // KEY=VALUE; the process environment in main
	Dir     string   // working directory; "" means the process's
	// User is this process's user on Linux (a devcontainer's remote
	// user gets its UID); nil elsewhere.
	User *compose.LocalUser
}

// deploy is what clientdeploy takes from the streams.
func (s streams) deploy() clientdeploy.Streams {
	return clientdeploy.Streams{Out: s.Out, Err: s.Err, Environ: s.Environ}
}

func (s streams) workingDir() (string, error) {
	if s.Dir != "" {
		return s.Dir, nil
	}
	return os.Getwd()
}

// exitError carries a specific exit status (e.g. from `compose exec`).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run executes the command line and returns the process exit status.
func run(args []string, s streams) int { return runContext(context.Background(), args, s) }

// runContext is run with a parent context that may cancel it like SIGINT,
// and hooks that adjust the root command before it runs.
func runContext(parent context.Context, args []string, s streams, configure ...func(*cobra.Command)) int {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// compose-go reports some warnings through logrus; show them like ours.
	logrus.SetOutput(s.Err)
	logrus.SetFormatter(warnFormatter{})

	root := newRootCmd(s)
	for _, c := range configure {
		c(root)
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(s.Err, "Error: %v\n", err)
	return 1
}

func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:              "cornus",
		Short:            "Deploy Compose projects and devcontainers to any container runtime",
		SilenceUsage:     true,
		SilenceErrors:    true,
		TraverseChildren: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.AddCommand(
		newComposeCmd(s),
		newDeployCmd(s),
		newImageCmd(s),
		newValidateCmd(s),
		newVersionCmd(s),
		newPluginCmd(s),
		newSessionAgentCmd(s),
		newProjectCmd(s),
		newLoginCmd(s),
		newPortForwardCmd(s),
		newTunnelCmd(s),
		newEgressCmd(s),
		newPACSandboxCmd(s),
		newK8sCmd(s),
	)
	root.AddCommand(hostCommands(s)...)
	return root
}

// printWarnings writes one WARN line per warning to stderr.
func printWarnings(w io.Writer, warns []spec.Warning) {
	for _, wr := range warns {
		fmt.Fprintf(w, "WARN %s\n", wr)
	}
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type warnFormatter struct{}

func (warnFormatter) Format(e *logrus.Entry) ([]byte, error) {
	level := "WARN"
	if e.Level < logrus.WarnLevel {
		level = "ERROR"
	} else if e.Level > logrus.WarnLevel {
		level = "INFO"
	}
	return []byte(level + " " + e.Message + "\n"), nil
}
