package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newImageCmd(s streams) *cobra.Command {
	var server string
	cmd := &cobra.Command{Use: "image", Short: "Manage images on the selected backend (or a cornus server's)"}
	cmd.PersistentFlags().StringVar(&server, "server", "", "A cornus server's URL (default $CORNUS_SERVER): its backend's images")
	cmd.AddCommand(newImageLoadCmd(s, &server), newImageLsCmd(s, &server))
	return cmd
}

func newImageLoadCmd(s streams, server *string) *cobra.Command {
	var input string
	cmd := &cobra.Command{
		Use:   "load [-i FILE.tar]",
		Short: "Load an image from a docker-archive or OCI-layout tar (default: stdin)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r io.Reader = s.In
			if input != "" && input != "-" {
				f, err := os.Open(input)
				if err != nil {
					return err
				}
				defer f.Close()
				r = f
			}
			se, err := openSession(cmd.Context(), s, *server, "", "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			images, err := se.Images("loading images")
			if err != nil {
				return err
			}
			refs, err := images.LoadImage(cmd.Context(), r)
			if err != nil {
				if input == "" || input == "-" {
					return err
				}
				return fmt.Errorf("%s: %w", input, err) // the backend says "load image"
			}
			for _, ref := range refs {
				fmt.Fprintf(s.Out, "Loaded image: %s\n", ref)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "", "Read from a tar archive file instead of stdin")
	return cmd
}

func newImageLsCmd(s streams, server *string) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List images",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			se, err := openSession(cmd.Context(), s, *server, "", "quiet")
			if err != nil {
				return err
			}
			defer se.Close()
			images, err := se.Images("listing images")
			if err != nil {
				return err
			}
			imgs, err := images.ListImages(cmd.Context())
			if err != nil {
				return err
			}
			sort.Slice(imgs, func(i, j int) bool { return imgs[i].Created.After(imgs[j].Created) })
			if quiet {
				for _, img := range imgs {
					fmt.Fprintln(s.Out, shortID(img.ID))
				}
				return nil
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 3, ' ', 0)
			fmt.Fprintln(tw, "REPOSITORY\tTAG\tIMAGE ID\tCREATED\tSIZE")
			for _, img := range imgs {
				tags := img.Tags
				if len(tags) == 0 {
					tags = []string{"<none>:<none>"}
				}
				for _, t := range tags {
					repo, tag := splitRef(t)
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", repo, tag, shortID(img.ID), ago(img.Created), humanSize(img.Size))
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "Only show image IDs")
	return cmd
}
