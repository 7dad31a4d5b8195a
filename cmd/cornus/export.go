package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
)

func newExportCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.CopyOptions
	var output string
	cmd := &cobra.Command{
		Use:   "export [OPTIONS] SERVICE",
		Short: "Export a service container's filesystem as a tar archive",
		Long:  "Write a tar of a service container's filesystem (its first container, or --index): the image's files and the container's changes, no volumes.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" && isTerminal(s.Out) {
				return errors.New("refusing to write a tar archive to a terminal: use -o FILE or redirect the output")
			}
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			o.Service = args[0]
			rc, err := se.Engine().Export(ctx, t.name, o)
			if err != nil {
				return err
			}
			defer rc.Close()
			if output == "" {
				_, err = io.Copy(s.Out, rc)
				return err
			}
			return writeWhole(output, rc)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "Write to a file, instead of STDOUT")
	fl.IntVar(&o.Index, "index", 0, "index of the container if service has multiple replicas.")
	return cmd
}

// writeWhole writes r to path through a temporary file beside it: a
// failed export leaves no partial archive under the name asked.
func writeWhole(path string, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func newCommitCmd(f *composeFlags, s streams) *cobra.Command {
	var o engine.CopyOptions
	var c backends.CommitOptions
	pause := true
	cmd := &cobra.Command{
		Use:   "commit [OPTIONS] SERVICE [REPOSITORY[:TAG]]",
		Short: "Create a new image from a service container's changes",
		Long:  "Make an image of a service container (its first container, or --index): its image and its changes, with the Dockerfile instructions --change gives applied.",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			t, se, err := f.openProject(ctx, s, true, f.progress)
			if err != nil {
				return err
			}
			defer se.Close()
			o.Service = args[0]
			if len(args) == 2 {
				c.Reference = args[1]
			}
			c.NoPause = !pause
			_, err = se.Engine().Commit(ctx, t.name, o, c)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&c.Author, "author", "a", "", `Author (e.g., "John Hannibal Smith <hannibal@a-team.com>")`)
	fl.StringArrayVarP(&c.Changes, "change", "c", nil, "Apply Dockerfile instruction to the created image")
	fl.StringVarP(&c.Message, "message", "m", "", "Commit message")
	fl.BoolVarP(&pause, "pause", "p", true, "Pause container during commit")
	fl.IntVar(&o.Index, "index", 0, "index of the container if service has multiple replicas.")
	return cmd
}
