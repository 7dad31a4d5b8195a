package server

import (
	"context"
	"fmt"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// A server that stops (a restart, a rollout of its pod) leaves its
// sessions' deployments running and their sessions in sessions.json; the
// next start gives each client the grace to come back and resume its
// session by id (the agent holding `up -d`'s session redials), and only
// then takes the deployment down. A session whose connection drops while
// the server runs ends at once, as before: its client is gone.

// EnvSessionGrace is how long a session of the previous run may take to
// come back (a duration; default DefaultSessionGrace).
const EnvSessionGrace = "CORNUS_SESSION_GRACE"

// DefaultSessionGrace covers a server pod's restart (image on the node)
// with room for the client's redial backoff.
const DefaultSessionGrace = 60 * time.Second

// orphan is a session of the previous run waiting for its client.
type orphan struct {
	state sessionState
	timer *time.Timer
}

// sessionGrace reads EnvSessionGrace.
func sessionGrace(environ []string) (time.Duration, error) {
	v := envlist.Get(environ, EnvSessionGrace)
	if v == "" {
		return DefaultSessionGrace, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a duration such as 60s: %w", EnvSessionGrace, v, errdefs.ErrInvalidArgument)
	}
	return d, nil
}

// adopt keeps st for its client for the grace (ss.mu held).
func (ss *sessions) adopt(st sessionState, grace time.Duration) {
	o := &orphan{state: st}
	o.timer = time.AfterFunc(grace, func() { ss.expire(st.ID) })
	ss.orphans[st.ID] = o
}

// expire takes down the deployment of a session whose client did not
// come back, unless another session deployed the project since.
func (ss *sessions) expire(id string) {
	ss.mu.Lock()
	o := ss.orphans[id]
	if o == nil || ss.stopping {
		ss.mu.Unlock()
		return
	}
	delete(ss.orphans, id)
	project := o.state.Project
	down := ss.byProject[project] == nil && ss.deploying[project] == nil
	var removed chan struct{}
	if down {
		removed = make(chan struct{})
		ss.removing[project] = removed
	}
	_ = ss.saveLocked()
	ss.mu.Unlock()
	if !down {
		return
	}
	defer func() {
		ss.mu.Lock()
		delete(ss.removing, project)
		ss.mu.Unlock()
		close(removed)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ss.srv.log.Info("removing the deployment of a session that did not come back after the restart", "project", project, "session", short(id))
	grace := dropGrace
	if err := ss.srv.e.Down(ctx, project, engine.DownOptions{Timeout: &grace}); err != nil {
		ss.srv.log.Error("remove the deployment of a session that did not come back", "project", project, "err", err)
		return
	}
	ss.srv.tokens.forgetCaretaker(project)
	ss.srv.forgetRelayed(project)
}

// claim takes the orphan id for tenant's new session s of project: s
// becomes that session again (same id, same deployment). Undo puts the
// orphan back when the session then fails to start.
func (ss *sessions) claim(s *session, id, tenant, project string) (undo func(), err error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	o := ss.orphans[id]
	if o == nil || o.state.Tenant != tenant || o.state.Project != project {
		return nil, fmt.Errorf("%w: no session %s… of yours to resume for project %s (it ended, or its grace passed)", errdefs.ErrNotFound, short(id), project)
	}
	if !o.timer.Stop() {
		return nil, fmt.Errorf("%w: session %s…'s grace has just passed", errdefs.ErrNotFound, short(id))
	}
	delete(ss.orphans, id)
	s.id, s.detach = id, o.state.Detach
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		ss.adopt(o.state, ss.grace)
	}, nil
}

// resumed makes the claimed session s the owner of its deployment again.
func (ss *sessions) resumed(s *session, project string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.project = project
	ss.byProject[project] = s
	_ = ss.saveLocked()
	ss.srv.log.Info("session resumed after the restart", "project", project, "session", short(s.id))
}
