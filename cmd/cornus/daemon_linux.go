package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/dockerapi"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/internal/svc"
)

func dockerService(environ []string) svc.Service {
	return svc.Service{Name: "docker", Dir: svc.StateDir(environ)}
}

func newDaemonCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "daemon", Short: "Run cornus servers (the Docker Engine API proxy)"}
	cmd.AddCommand(newDaemonDockerCmd(s), newDaemonStatusCmd(s), newDaemonStopCmd(s))
	return cmd
}

func newDaemonDockerCmd(s streams) *cobra.Command {
	var listen string
	var detach, debug bool
	cmd := &cobra.Command{
		Use:   "docker [--listen ADDR] [-d]",
		Short: "Serve the Docker Engine API over the selected backend",
		Long: "Serve the Docker Engine API so stock docker, docker compose and the devcontainer CLI deploy through cornus:\n" +
			"  export DOCKER_HOST=unix:///run/cornus/docker.sock\n" +
			"The backend is CORNUS_DEPLOY_BACKEND (default dockerhost). Containers may bind host paths under\n" +
			"CORNUS_ALLOW_BIND_SOURCES and run privileged only with CORNUS_ALLOW_PRIVILEGED=1.\n" +
			"Container reads are cached (kept fresh by the backend's events); CORNUS_DOCKERAPI_CACHE=off reads through.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Refuse a bad address before connecting to the backend or
			// starting a background server that would only log it.
			if err := dockerapi.CheckListen(listen); err != nil {
				return err
			}
			if detach {
				return startDetached(cmd.Context(), s, listen)
			}
			return serveDocker(cmd.Context(), s, listen, debug)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", dockerapi.DefaultListen, "Where to serve: unix:///path/docker.sock or tcp://127.0.0.1:PORT")
	cmd.Flags().BoolVarP(&detach, "detach", "d", false, "Run in the background (see `cornus daemon status` / `stop`)")
	cmd.Flags().BoolVar(&debug, "debug", false, "Log every request")
	return cmd
}

func serveDocker(ctx context.Context, s streams, listen string, debug bool) error {
	cache, err := readCacheFromEnv(s.Environ)
	if err != nil {
		return err
	}
	b, err := fromenv.Open(ctx, s.Environ)
	if err != nil {
		return err
	}
	defer b.Close()
	l, err := dockerapi.Listen(listen)
	if err != nil {
		return err
	}
	bx := builder.New(b, s.Environ)
	defer bx.Close()
	opts := []dockerapi.Option{dockerapi.WithPolicy(hostpolicy.FromEnv(s.Environ, "")), dockerapi.WithReadCache(cache), dockerapi.WithBuilder(bx)}
	if debug {
		opts = append(opts, dockerapi.WithRequestLog(s.Err))
	}
	srv := dockerapi.New(b, opts...)
	note := ""
	if !cache {
		note = ", read cache off (" + envDockerAPICache + ")"
	}
	fmt.Fprintf(s.Err, "cornus: serving the Docker Engine API (v%s) on %s with the %s backend%s\n", dockerapi.MaxAPIVersion, listen, b.Name(), note)
	return srv.Serve(ctx, l)
}

// envDockerAPICache turns the proxy's container read cache off ("off") to
// measure it or rule it out; anything else but "on" or empty is an error.
const envDockerAPICache = "CORNUS_DOCKERAPI_CACHE"

func readCacheFromEnv(environ []string) (bool, error) {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == envDockerAPICache {
			v = val // the last one wins, as in a shell
		}
	}
	switch strings.TrimSpace(v) {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want on or off", envDockerAPICache, v)
}

func startDetached(ctx context.Context, s streams, listen string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	svcd := dockerService(s.Environ)
	pid, err := svcd.Start([]string{exe, "daemon", "docker", "--listen", listen}, s.Environ, func() error {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return dockerapi.Ping(pctx, listen)
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(svcd.PidFile()+".addr", []byte(listen), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "cornus Docker API server running (pid %d), log %s\nexport DOCKER_HOST=%s\n", pid, svcd.LogFile(), listen)
	return nil
}

func newDaemonStatusCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether the background Docker API server runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svcd := dockerService(s.Environ)
			pid, ok := svcd.Running()
			if !ok {
				fmt.Fprintln(s.Out, "docker: not running")
				return exitError{code: 3}
			}
			addr, _ := os.ReadFile(svcd.PidFile() + ".addr")
			listen := strings.TrimSpace(string(addr))
			state := "answering"
			pctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
			defer cancel()
			if err := dockerapi.Ping(pctx, listen); err != nil {
				state = "not answering: " + err.Error()
			}
			fmt.Fprintf(s.Out, "docker: running (pid %d) on %s, %s; log %s\n", pid, listen, state, svcd.LogFile())
			return nil
		},
	}
}

func newDaemonStopCmd(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the background Docker API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svcd := dockerService(s.Environ)
			if err := svcd.Stop(10 * time.Second); err != nil {
				return err
			}
			_ = os.Remove(svcd.PidFile() + ".addr")
			fmt.Fprintln(s.Out, "docker: stopped")
			return nil
		},
	}
}
