package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cornus-dev/cornus/server/client"
)

// holdSession opens the deploy-attach session that keeps project's
// deployment alive on the server: held by this process for a foreground
// command, or by a detached agent process (`up -d`) that lives until the
// server ends the session (down) or it is killed.
// Whoever holds the session serves exp, the client-local mounts (nil:
// none).
func (se *session) holdSession(ctx context.Context, s streams, project string, background bool, exp *client.Exports) error {
	r := se.remote
	if !background {
		sess, err := r.client.OpenSession(ctx, project, false)
		if err != nil {
			return err
		}
		serveExports(ctx, sess, exp)
		r.attach, r.projects.Session = sess, sess.ID
		return serveEgress(sess, se.egress, s.Environ)
	}
	s.Environ = append(append([]string{}, s.Environ...), egressEnv(se.egress)...)
	id, err := spawnAgent(ctx, s, r.client.URL(), project, exp)
	if err != nil {
		return err
	}
	r.projects.Session = id
	return nil
}

// spawnAgent starts `cornus session-agent` detached and returns the id of
// the session it opened.
func spawnAgent(ctx context.Context, s streams, url, project string, exp *client.Exports) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	tok, err := tokenFor(url, s.Environ)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(exe, "session-agent", "--server", url, project)
	// The token goes through the environment, not argv (ps shows argv).
	cmd.Env = append(append(append([]string{}, s.Environ...), envToken+"="+tok), exportsEnv(exp)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start the session agent: %w", err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case id := <-line:
		_ = cmd.Process.Release()
		if id == "" {
			return "", fmt.Errorf("the session agent could not open a session: %s", strings.TrimSpace(errb.String()))
		}
		return id, nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	return "", fmt.Errorf("the session agent did not open a session within 30s")
}

// newSessionAgentCmd is the hidden agent: it opens project's session,
// prints its id, and holds it until the server ends it.
func newSessionAgentCmd(s streams) *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:    "session-agent --server URL PROJECT",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newClient(s, serverURL(server, s.Environ))
			if err != nil {
				return err
			}
			exp, err := agentExports(s.Environ)
			if err != nil {
				return err
			}
			blocks, err := egressFromEnv(s.Environ)
			if err != nil {
				return err
			}
			sess, err := c.OpenSession(cmd.Context(), args[0], false)
			if err != nil {
				return err
			}
			serveExports(cmd.Context(), sess, exp)
			if err := serveEgress(sess, blocks, s.Environ); err != nil {
				_ = sess.Close()
				return err
			}
			fmt.Fprintln(s.Out, sess.ID)
			if f, ok := s.Out.(*os.File); ok {
				f.Close() // the parent reads to the newline and goes
			}
			select {
			case <-sess.Done():
			case <-cmd.Context().Done():
				_ = sess.Close()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server")
	return cmd
}
