package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/containerd/errdefs"
	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/server"
)

// dataDir is CORNUS_DATA_DIR, else /var/lib/cornus.
func dataDir(environ []string) string {
	if d := envlist.Get(environ, "CORNUS_DATA_DIR"); d != "" {
		return d
	}
	return "/var/lib/cornus"
}

func newServeCmd(s streams) *cobra.Command {
	cfg := server.Config{Listen: "127.0.0.1:7443"}
	var caFile string
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--tls-cert F --tls-key F]",
		Short: "Serve the deploy API: deploy from other machines to this one's backend",
		Long: "Serve the deploy API over HTTP/1.1 and WebSocket on --listen, with TLS when a certificate is given " +
			"(plain HTTP only on loopback unless --insecure-listen). Clients authenticate with tokens from " +
			"CORNUS_TOKENS_FILE (their SHA-256 digests, re-read when it changes: `cornus token create NAME` adds one, " +
			"`cornus token revoke NAME` ends that tenant's sessions within a second). " +
			"The backend is CORNUS_DEPLOY_BACKEND's, as for the CLI.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg.Environ, cfg.DataDir = s.Environ, dataDir(s.Environ)
			if cfg.AdvertiseURL == "" {
				cfg.AdvertiseURL = envlist.Get(s.Environ, server.EnvAdvertiseURL)
			}
			if cfg.RegistryHost == "" {
				cfg.RegistryHost = envlist.Get(s.Environ, server.EnvRegistryHost)
			}
			if caFile == "" {
				caFile = envlist.Get(s.Environ, server.EnvAdvertiseCA)
			}
			if caFile != "" {
				ca, err := os.ReadFile(caFile)
				if err != nil {
					return fmt.Errorf("--advertise-ca: %w", err)
				}
				cfg.AdvertiseCA = string(ca)
			}
			cfg.Log = slog.New(slog.NewJSONHandler(s.Err, nil))
			b, srv, err := openServer(ctx, s.Environ, cfg)
			if err != nil {
				return err
			}
			defer b.Close()
			return srv.Serve(ctx, func(addr string) {
				scheme := "http"
				if cfg.TLSCert != "" {
					scheme = "https"
				}
				cfg.Log.Info("serving", "url", scheme+"://"+addr, "backend", b.Name(), "tokens", srv.TokensFile())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Listen, "listen", cfg.Listen, "Address to listen on (host:port)")
	fl.StringVar(&cfg.TLSCert, "tls-cert", "", "TLS certificate (PEM)")
	fl.StringVar(&cfg.TLSKey, "tls-key", "", "TLS key (PEM)")
	fl.BoolVar(&cfg.InsecureListen, "insecure-listen", false, "Serve plain HTTP off loopback (tokens cross the network in the clear)")
	fl.StringVar(&cfg.TokensFile, "tokens-file", "", "Client tokens (default $CORNUS_TOKENS_FILE, else $CORNUS_DATA_DIR/server/tokens)")
	fl.StringVar(&cfg.AdvertiseURL, "advertise-url", "", "URL companions dial back to (default $CORNUS_ADVERTISE_URL)")
	fl.StringVar(&caFile, "advertise-ca", "", "PEM file of the CA the companions trust for the advertised URL (a private certificate's; default $CORNUS_ADVERTISE_CA)")
	fl.StringVar(&cfg.RegistryHost, "registry-host", "", "HOST:PORT the backend's nodes pull this server's registry from, where they pull every image (kubernetes; default $CORNUS_REGISTRY_HOST, else the address served on)")
	return cmd
}

func newTokenCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Manage cornus serve's client tokens (the file keeps their SHA-256 digests only)"}
	var file string
	path := func() string {
		if file != "" {
			return file
		}
		return server.TokensFile(s.Environ, dataDir(s.Environ))
	}
	var operator bool
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a client token for tenant NAME and print it (once: the file keeps only its digest)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			role := ""
			if operator {
				role = server.RoleOperator
			}
			tok, err := server.AddClientToken(path(), args[0], role)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, tok)
			fmt.Fprintf(s.Err, "This token is shown once and cannot be shown again: the tokens file %s keeps its SHA-256 digest only.\n", path())
			return nil
		},
	}
	create.Flags().BoolVar(&operator, "operator", false, "An operator token: may adopt projects nobody deployed through the server (cornus project adopt)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the client tokens: name, role, created, last used, digest prefix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			es, err := server.ListClientTokens(path())
			if err != nil {
				return err
			}
			used := server.LastUsed(dataDir(s.Environ))
			tw := tabwriter.NewWriter(s.Out, 0, 4, 3, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tLAST USED\tDIGEST")
			for _, e := range es {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s…\n", e.Name, cmpOr(e.Role, "tenant"), stamp(e.Created), stamp(used[e.Name]), e.DigestPrefix())
			}
			return tw.Flush()
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke every token of NAME; a running server ends its sessions, relays and requests within a second",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := server.RevokeClientToken(path(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Revoked %s\n", args[0])
			return nil
		},
	}
	for _, c := range []*cobra.Command{create, list, revoke} {
		c.Flags().StringVar(&file, "tokens-file", "", "Tokens file (default $CORNUS_TOKENS_FILE, else $CORNUS_DATA_DIR/server/tokens)")
		cmd.AddCommand(c)
	}
	return cmd
}

// openServer opens the backend and the server on it, retrying while the
// backend is unreachable (a cluster's API server restarting, a daemon
// not up yet): a server that exited instead would restart in a loop. It
// says so each time; anything else fails at once.
func openServer(ctx context.Context, environ []string, cfg server.Config) (backends.Backend, *server.Server, error) {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		b, err := fromenv.Open(ctx, environ)
		if err == nil {
			srv, serr := server.New(ctx, b, cfg)
			if serr == nil {
				return b, srv, nil
			}
			b.Close()
			err = serr
		}
		if !errdefs.IsUnavailable(err) {
			return nil, nil, err
		}
		cfg.Log.Warn("the backend is unreachable; retrying", "err", err.Error(), "in", wait.String())
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
	}
}
