package clientdeploy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/procattr"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// hold opens the deploy-attach session that keeps project's deployment
// alive on the server: held by this process for a foreground command, or
// by a detached agent process (`up -d`) that lives until the server ends
// the session (down) or it is killed.
// Whoever holds the session serves exp, the client-local mounts (nil:
// none), the client routes of blocks, the deployment's egress, and mints
// the credentials of srcs.
func (se *Session) hold(ctx context.Context, project string, background bool, blocks map[string]*spec.Egress, srcs credentialSources, exp *client.Exports) error {
	r := se.remote
	if !background {
		sess, err := r.client.OpenSession(ctx, project, false)
		if err != nil {
			return err
		}
		serveExports(ctx, sess, exp)
		serveCredentials(sess, srcs, se.streams.Environ)
		r.attach, r.projects.Session = sess, sess.ID
		return serveEgress(sess, blocks, se.streams.Environ, se.streams.Err)
	}
	environ := append(append(append([]string{}, se.streams.Environ...), egressEnv(blocks)...), credentialsEnv(srcs)...)
	id, err := spawnAgent(ctx, environ, r.client.URL(), project, exp)
	if err != nil {
		return err
	}
	r.projects.Session = id
	return nil
}

// Held is closed when the session this process holds ends (nil: it holds
// none).
func (se *Session) Held() <-chan struct{} {
	if se.remote == nil || se.remote.attach == nil {
		return nil
	}
	return se.remote.attach.Done()
}

// spawnAgent starts `cornus session-agent` detached and returns the id of
// the session it opened.
func spawnAgent(ctx context.Context, environ []string, url, project string, exp *client.Exports) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	tok, err := tokenFor(url, environ)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(exe, "session-agent", "--server", url, project)
	// The token goes through the environment, not argv (ps shows argv).
	cmd.Env = append(append(append([]string{}, environ...), envToken+"="+tok), exportsEnv(exp)...)
	cmd.SysProcAttr = procattr.Session()
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

// ServeAgent is the session agent spawnAgent starts (`cornus
// session-agent`): it opens project's session on the server at url,
// serves the exports and egress its environment carries, prints the
// session's id on s.Out (closing it: the parent reads to the newline
// and goes) and holds the session until the server ends it or ctx does.
func ServeAgent(ctx context.Context, s Streams, url, project string) error {
	c, err := NewClient(s.Environ, url)
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
	srcs, err := credentialsFromEnv(s.Environ)
	if err != nil {
		return err
	}
	sess, err := c.OpenSession(ctx, project, false)
	if err != nil {
		return err
	}
	serveExports(ctx, sess, exp)
	serveCredentials(sess, srcs, s.Environ)
	if err := serveEgress(sess, blocks, s.Environ, s.Err); err != nil {
		_ = sess.Close()
		return err
	}
	fmt.Fprintln(s.Out, sess.ID)
	if f, ok := s.Out.(*os.File); ok {
		f.Close()
	}
	for {
		select {
		case <-sess.Done():
		case <-ctx.Done():
			_ = sess.Close()
			return nil
		}
		// The connection dropped. If the server restarted, it keeps the
		// deployment for a while for this session to come back.
		next, err := resumeSession(ctx, c, project, sess.ID)
		if err != nil {
			return nil // ended for good: a down, or the server's grace passed
		}
		serveExports(ctx, next, exp)
		serveCredentials(next, srcs, s.Environ)
		if err := serveEgress(next, blocks, s.Environ, s.Err); err != nil {
			_ = next.Close()
			return err
		}
		sess = next
	}
}

// resumeMax bounds how long the agent redials a restarting server (its
// grace decides; this only stops an agent whose server never returns).
const resumeMax = 5 * time.Minute

// resumeSession redials id until the server takes it back, says there is
// nothing to resume, or resumeMax passes.
func resumeSession(ctx context.Context, c *client.Client, project, id string) (*client.Session, error) {
	deadline := time.Now().Add(resumeMax)
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		sess, err := c.ResumeSession(ctx, project, id)
		if err == nil || !errdefs.IsUnavailable(err) || time.Now().After(deadline) {
			return sess, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
