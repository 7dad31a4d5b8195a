package main

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/clientdeploy"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// stamp renders a time for a listing ("-" when unknown).
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func newProjectCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{Use: "project", Short: "Manage projects on a cornus server"}
	var url, tenant string
	adopt := &cobra.Command{
		Use:   "adopt PROJECT",
		Short: "Give a project nobody deployed through the server to a tenant (an operator token's verb)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := clientdeploy.NewClient(s.Environ, url)
			if err != nil {
				return err
			}
			got, err := c.Adopt(cmd.Context(), args[0], tenant)
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Project %s now belongs to %s\n", args[0], got)
			return nil
		},
	}
	adopt.Flags().StringVar(&url, "server", envlist.Get(s.Environ, "CORNUS_SERVER"), "The server's URL")
	adopt.Flags().StringVar(&tenant, "tenant", "", "The tenant to give it to (default: the operator token's own)")
	cmd.AddCommand(adopt)
	return cmd
}

func newLoginCmd(s streams) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "login URL",
		Short: "Store a token for a cornus server (read from --token, else stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := strings.TrimRight(args[0], "/")
			if token == "" {
				line, err := bufio.NewReader(s.In).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("login: give the token with --token or on stdin")
				}
				token = strings.TrimSpace(line)
			}
			c, err := clientdeploy.NewClientToken(s.Environ, url, token)
			if err != nil {
				return err
			}
			info, err := c.Info(cmd.Context())
			if err != nil {
				return fmt.Errorf("login to %s: %w", url, err)
			}
			path, err := clientdeploy.LoginFile(s.Environ)
			if err != nil {
				return err
			}
			if err := clientdeploy.SaveLogin(path, url, token); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "Logged in to %s as %s (backend %s); the token is in %s\n", url, info.Tenant, info.Backend, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "The token (prefer stdin: flags show in ps)")
	return cmd
}
