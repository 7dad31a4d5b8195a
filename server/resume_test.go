package server

import (
	"context"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/server/client"
)

// Issue 28: a restarted server keeps a session's deployment for its client
// to resume: only that tenant, with that session's id and project, takes
// it back (bob cannot, even knowing the id); a session nobody resumes
// loses its deployment after the grace.
func TestSessionResumeAfterRestart(t *testing.T) {
	ts := newTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := func(token, project string) *client.Session {
		t.Helper()
		cl, err := client.New(ts.http.URL, token)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := cl.OpenSession(ctx, project, false)
		if err != nil {
			t.Fatal(err)
		}
		p := sleeperProject(project)
		if code, body := ts.upWithSession(p, token, sess.ID); code != 200 {
			t.Fatalf("up %s: %d %s", project, code, body)
		}
		t.Cleanup(func() { ts.down(project) })
		return sess
	}
	kept, dropped := uniqueProject("resumed"), uniqueProject("orphan")
	keptSess, droppedSess := open(ts.alice, kept), open(ts.alice, dropped)

	grace := 3 * time.Second
	ts.restart("CORNUS_SESSION_GRACE=" + grace.String())
	restarted := time.Now()
	for _, p := range []string{kept, dropped} {
		if n := len(ts.containers(p)); n != 1 {
			t.Fatalf("after the restart %s has %d containers, want 1 (kept for the grace)", p, n)
		}
	}
	resume := func(token, project, id string) (*client.Session, error) {
		cl, err := client.New(ts.http.URL, token)
		if err != nil {
			t.Fatal(err)
		}
		return cl.ResumeSession(ctx, project, id)
	}
	// The attacks: another tenant with the id; the right tenant naming
	// another project; an id that was never a session.
	for _, c := range []struct{ token, project, id string }{
		{ts.bob, kept, keptSess.ID}, {ts.alice, dropped, keptSess.ID}, {ts.alice, kept, "0123456789abcdef0123456789abcdef"},
	} {
		// (bob is refused at the project before any session is looked at.)
		if s, err := resume(c.token, c.project, c.id); !errdefs.IsNotFound(err) && !errdefs.IsPermissionDenied(err) {
			if s != nil {
				s.Close()
			}
			t.Errorf("resume of %s… for %s: %v, want refused", c.id[:8], c.project, err)
		}
	}
	sess, err := resume(ts.alice, kept, keptSess.ID)
	if err != nil {
		t.Fatalf("alice's resume: %v", err)
	}
	if sess.ID != keptSess.ID {
		t.Errorf("resumed as %s, want %s", sess.ID, keptSess.ID)
	}
	if _, err := resume(ts.alice, kept, keptSess.ID); !errdefs.IsNotFound(err) {
		t.Errorf("a second resume of the same session: %v, want not found", err)
	}
	for len(ts.containers(dropped)) > 0 {
		if time.Since(restarted) > grace+30*time.Second {
			t.Fatalf("the session nobody resumed still has its deployment %v after the restart", time.Since(restarted))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if time.Since(restarted) < grace {
		t.Errorf("the unresumed deployment went %v after the restart, before the grace (%v)", time.Since(restarted), grace)
	}
	if n := len(ts.containers(kept)); n != 1 {
		t.Fatalf("the resumed session's deployment has %d containers after the grace, want 1", n)
	}
	// It is the session's again: its end takes the deployment down.
	sess.Close()
	for deadline := time.Now().Add(30 * time.Second); len(ts.containers(kept)) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the resumed session ended and its deployment stayed")
		}
	}
	droppedSess.Close()
}
