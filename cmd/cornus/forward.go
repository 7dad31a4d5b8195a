package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/server/client"
)

// reach is how port-forward and tunnel reach a project's workloads: a
// session through a server, or this host's backend directly.
func reach(ctx context.Context, s streams, f *composeFlags) (client.Dialer, func(), error) {
	t, err := f.resolveName(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if url := clientdeploy.ServerURL(f.server, s.Environ); url != "" {
		c, err := clientdeploy.NewClient(s.Environ, url)
		if err != nil {
			return nil, nil, err
		}
		// Detached: forwarding ties no deployment to this command.
		sess, err := c.OpenSession(ctx, t.name, true)
		if err != nil {
			return nil, nil, err
		}
		return sess, func() { _ = sess.Close() }, nil
	}
	return localReach(ctx, s, t.name)
}

func newPortForwardCmd(s streams) *cobra.Command {
	f := &composeFlags{}
	cmd := &cobra.Command{
		Use:   "port-forward [--server URL] SERVICE [LOCAL:]REMOTE[/udp]...",
		Short: "Forward local ports to a service's ports (on this host's backend or through a cornus server)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var fwds []client.Forward
			for _, a := range args[1:] {
				fw, err := client.ParseForward(a)
				if err != nil {
					return err
				}
				fwds = append(fwds, fw)
			}
			d, closeFn, err := reach(ctx, s, f)
			if err != nil {
				return err
			}
			defer closeFn()
			g, ctx := errgroup.WithContext(ctx)
			for _, fw := range fwds {
				g.Go(func() error {
					return client.ServeForward(ctx, d, args[0], fw, func(addr string) {
						fmt.Fprintf(s.Out, "Forwarding from %s -> %s:%d/%s\n", addr, args[0], fw.Remote, fw.Proto)
					})
				})
			}
			return g.Wait()
		},
	}
	addProjectFlags(cmd, f)
	return cmd
}

func newTunnelCmd(s streams) *cobra.Command {
	f := &composeFlags{}
	var listen string
	cmd := &cobra.Command{
		Use:   "tunnel [--server URL] [--listen 127.0.0.1:1080]",
		Short: "Serve SOCKS5 locally, reaching the project's services by name",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, closeFn, err := reach(ctx, s, f)
			if err != nil {
				return err
			}
			defer closeFn()
			return client.ServeTunnel(ctx, d, listen, func(addr string) {
				fmt.Fprintf(s.Out, "SOCKS5 on %s: connect to SERVICE:PORT\n", addr)
			})
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:1080", "Address of the SOCKS5 server")
	addProjectFlags(cmd, f)
	return cmd
}

// addProjectFlags are the flags that name a project without a verb.
func addProjectFlags(cmd *cobra.Command, f *composeFlags) {
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.files, "file", "f", nil, "Compose configuration files")
	fl.StringVarP(&f.projectName, "project-name", "p", "", "Project name")
	fl.StringVar(&f.projectDir, "project-directory", "", "Alternate working directory")
	fl.StringVar(&f.server, "server", "", "A cornus server (URL; default $CORNUS_SERVER)")
}
