package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// newCaretakerCmd is the companion's entry point (hidden: the server and
// the engine start it in the agent image, configured by environment).
func newCaretakerCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:    "caretaker [ready]",
		Hidden: true,
		Args:   cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if args[0] != "ready" {
					return fmt.Errorf("caretaker: unknown argument %q", args[0])
				}
				return caretaker.Ready()
			}
			cfg, err := caretaker.Parse(envlist.Get(s.Environ, caretaker.EnvConfig))
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			log := slog.New(slog.NewJSONHandler(s.Err, nil))
			return caretaker.Run(ctx, cfg, envlist.Get(s.Environ, caretaker.EnvToken), log)
		},
	}
}

// newAgentCmd: `cornus agent image` builds the companion image from this
// binary, loads it into the selected backend and prints its reference.
func newAgentCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "The caretaker companion's image"}
	var out string
	image := &cobra.Command{
		Use:   "image [-o FILE]",
		Short: "Build the agent image from this binary, load it into the backend (or write it to FILE), print its reference",
		Long: "Build the image of this binary at /cornus: the caretaker companions' image, and the in-cluster server's " +
			"(charts/cornus runs it with image.tag the digest printed). With -o, write it as a docker-archive instead of " +
			"loading it: import it into each node (ctr -n k8s.io images import FILE) or push it to a registry.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out != "" {
				return writeAgentImage(s, out)
			}
			b, err := fromenv.Open(cmd.Context(), s.Environ)
			if err != nil {
				return err
			}
			defer b.Close()
			ref, err := caretaker.EnsureAgentImage(cmd.Context(), b, s.Environ)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, ref)
			return nil
		},
	}
	image.Flags().StringVarP(&out, "output", "o", "", "Write the image to FILE (docker-archive) instead of loading it")
	cmd.AddCommand(image)
	return cmd
}

// writeAgentImage writes this binary's agent image to path and prints its
// reference.
func writeAgentImage(s streams, path string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ref, err := caretaker.AgentRef(exe)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(caretaker.BuildAgentImage(pw, exe, ref)) }()
	err = writeWhole(path, pr)
	pr.CloseWithError(errors.New("write ended"))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.Out, ref)
	return err
}
