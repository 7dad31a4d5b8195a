package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/plugin"
)

// runPlugin runs cornus as the docker CLI plugin docker-cornus: it answers
// the metadata request, or turns `[DOCKER OPTIONS] cornus ARGS` into a
// cornus command line with the daemon the docker CLI would use, and runs
// it with a context the CLI cancels by closing its plugin socket.
func runPlugin(args []string, s streams) int {
	if plugin.IsMetadataRequest(args) {
		if err := plugin.WriteMetadata(s.Out); err != nil {
			fmt.Fprintf(s.Err, "Error: %v\n", err)
			return 1
		}
		return 0
	}
	p, err := plugin.Prepare(plugin.PrepareOptions{Args: args, Environ: s.Environ})
	if err != nil {
		fmt.Fprintf(s.Err, "Error: %v\n", err)
		return 1
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(s.Err, "WARN %s\n", w)
	}
	if p.Debug {
		host := p.Daemon.Host
		if host == "" {
			host = "cornus's default (CORNUS_DOCKER_SOCK, else unix:///var/run/docker.sock)"
		}
		fmt.Fprintf(s.Err, "DEBUG docker context %q (from %s), daemon %s, cornus args %q\n", p.Daemon.Context, p.Daemon.Source, host, p.Args)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Not connecting is allowed by the protocol: without the socket,
	// signals still reach us directly.
	stopWatch, _ := plugin.WatchCLI(s.Environ, cancel)
	defer stopWatch()
	s.Environ = p.Environ
	return runContext(ctx, p.Args, s, func(root *cobra.Command) {
		// Help and usage lines read `docker cornus ...`.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "docker " + plugin.Name}
	})
}

func newPluginCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Install cornus as a Docker CLI plugin (docker cornus ...)",
	}
	cmd.AddCommand(newPluginInstallCmd(s), newPluginUninstallCmd(s))
	return cmd
}

func newPluginInstallCmd(s streams) *cobra.Command {
	var o plugin.InstallOptions
	cmd := &cobra.Command{
		Use:   "install [--dir DIR] [--copy]",
		Short: "Install this binary as the docker CLI plugin docker-cornus",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			o.Environ = s.Environ
			r, err := plugin.Install(o)
			if err != nil {
				return err
			}
			switch {
			case r.Unchanged:
				fmt.Fprintf(s.Out, "%s is already this binary; nothing to do\n", r.Path)
			case r.Copied:
				fmt.Fprintf(s.Out, "Copied %s to %s\n", r.Executable, r.Path)
			default:
				fmt.Fprintf(s.Out, "Linked %s -> %s\n", r.Path, r.Executable)
			}
			if !r.Found {
				def, _ := plugin.DefaultDir(s.Environ)
				fmt.Fprintf(s.Out, "Note: the docker CLI looks for plugins in %s and the system cli-plugins directories; add %s to cliPluginsExtraDirs in its config.json\n",
					def, filepath.Dir(r.Path))
			}
			fmt.Fprintf(s.Out, "Run `docker %s version` to check it; then `docker %s up`, `docker %s compose ps`, `docker %s deploy -f deploy.yaml` use the docker CLI's context.\n",
				plugin.Name, plugin.Name, plugin.Name, plugin.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "Plugin directory (default $DOCKER_CONFIG/cli-plugins, else ~/.docker/cli-plugins)")
	cmd.Flags().BoolVar(&o.Copy, "copy", false, "Copy the binary instead of symlinking it")
	return cmd
}

func newPluginUninstallCmd(s streams) *cobra.Command {
	var o plugin.UninstallOptions
	cmd := &cobra.Command{
		Use:   "uninstall [--dir DIR]",
		Short: "Remove the docker CLI plugin docker-cornus",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			o.Environ = s.Environ
			r, err := plugin.Uninstall(o)
			if err != nil {
				return err
			}
			if r.Removed {
				fmt.Fprintf(s.Out, "Removed %s\n", r.Path)
			} else {
				fmt.Fprintf(s.Out, "%s is not installed; nothing to do\n", r.Path)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "Plugin directory (default $DOCKER_CONFIG/cli-plugins, else ~/.docker/cli-plugins)")
	return cmd
}
