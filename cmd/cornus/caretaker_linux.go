package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/caretaker"
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
			cfg, err := caretaker.Parse(envValue(s.Environ, caretaker.EnvConfig))
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			log := slog.New(slog.NewJSONHandler(s.Err, nil))
			return caretaker.Run(ctx, cfg, envValue(s.Environ, caretaker.EnvToken), log)
		},
	}
}

// newAgentCmd: `cornus agent image` builds the companion image from this
// binary, loads it into the selected backend and prints its reference.
func newAgentCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "The caretaker companion's image"}
	cmd.AddCommand(&cobra.Command{
		Use:   "image",
		Short: "Build the agent image from this binary, load it into the backend, print its reference",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	})
	return cmd
}
