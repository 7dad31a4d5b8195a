package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	"github.com/hashicorp/yamux"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/muxconn"
)

// A deploy-attach session is one WebSocket from a client, multiplexed by
// yamux: the client opens streams over it (port-forward, tunnel; client
// mounts later). A deployment made under a session lives as long as the
// session: when the WebSocket drops (the client exited or died), the
// server takes the deployment down. A detached session ties nothing.
//
// yamux, because it is small, has been carrying Consul's and Nomad's
// streams for years, does flow control per stream and keepalives, and
// runs over any net.Conn (here muxconn's upgraded connection).

// maxStreams bounds the streams open at once on one session or relay:
// each may buffer up to streamWindow.
const maxStreams = 64

// streamCap counts one connection's open streams.
type streamCap chan struct{}

func newStreamCap() streamCap { return make(streamCap, maxStreams) }

// take admits st, or refuses and closes it when maxStreams are open.
func (c streamCap) take(st net.Conn) bool {
	select {
	case c <- struct{}{}:
		return true
	default:
		api.Reply(st, fmt.Errorf("%w: %d streams are open on this connection already", errdefs.ErrUnavailable, maxStreams))
		st.Close()
		return false
	}
}

func (c streamCap) put() { <-c }

// serveStreams serves each stream mux accepts in its own goroutine, at
// most maxStreams at once, until mux closes.
func serveStreams(mux *yamux.Session, serve func(*yamux.Stream)) {
	streams := newStreamCap()
	for {
		st, err := mux.AcceptStream()
		if err != nil {
			return
		}
		if !streams.take(st) {
			continue
		}
		go func() {
			defer streams.put()
			serve(st)
		}()
	}
}

// streamWindow is how much a session stream may have in flight: yamux's
// 256 KiB default caps a port-forward at a few hundred MiB/s on loopback
// and far less over a real link; 4 MiB carries 200 MB/s at 20 ms of round
// trip. More cost more than it gave (docs/benchmarks.md): yamux grows a
// stream's receive buffer by doubling up to it, zeroing each new one, and
// maxStreams of them may be held by a peer that does not read.
const streamWindow = 4 << 20

// dropGrace is the stop grace of a deployment whose client is gone: no
// one waits for a graceful goodbye, and its ports and names should be
// free again within seconds.
const dropGrace = 2 * time.Second

// keepAlive is how often each side pings: a client that vanished without
// closing its socket is noticed within a few intervals.
const keepAlive = 2 * time.Second

type session struct {
	id      string
	tenant  string
	project string // the deployment it owns ("" until an up names it)
	detach  bool
	peer    // the client: streams relayed to it pass its answer through

	mountMu sync.Mutex
	mounts  *localMounts // client-local mounts, nil until the first
	// exports are the client-local mounts companions may open through
	// the server (remote mode), by index.
	exports map[int]bool
}

// unmount unmounts the session's client-local mounts, if any.
func (s *session) unmount() error {
	s.mountMu.Lock()
	ms := s.mounts
	s.mountMu.Unlock()
	if ms == nil {
		return nil
	}
	return ms.unmountAll()
}

type sessions struct {
	srv  *Server
	path string // sessions.json

	mu        sync.Mutex
	byID      map[string]*session
	byProject map[string]*session
	// deploying is the session of an up in progress, by project: its
	// companions open client-local mounts before the up makes it the
	// project's (own).
	deploying map[string]*session
	// removing are the projects an ended session's deployment is being
	// removed from, closed when it is gone: an up of one waits, or the
	// removal would take the new containers too.
	removing map[string]chan struct{}
	// orphans are the sessions of the previous run, waiting for their
	// clients for grace (resume.go).
	orphans  map[string]*orphan
	grace    time.Duration
	stopping bool
	downs    sync.WaitGroup
}

func newSessions(s *Server, path string, grace time.Duration) *sessions {
	return &sessions{srv: s, path: path, byID: map[string]*session{}, byProject: map[string]*session{}, deploying: map[string]*session{},
		removing: map[string]chan struct{}{}, orphans: map[string]*orphan{}, grace: grace}
}

// awaitRemoval waits until no ended session's deployment of project is
// being removed, then runs then (if any) holding ss.mu.
func (ss *sessions) awaitRemoval(ctx context.Context, project string, then func()) error {
	for {
		ss.mu.Lock()
		removed := ss.removing[project]
		if removed == nil {
			if then != nil {
				then()
			}
			ss.mu.Unlock()
			return nil
		}
		ss.mu.Unlock()
		select {
		case <-removed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// session is GET /v1/projects/{project}/session: the WebSocket that
// carries the session.
func (s *Server) session(w http.ResponseWriter, r *http.Request, id identity) {
	idb := make([]byte, 16)
	_, _ = rand.Read(idb)
	sess := &session{id: hex.EncodeToString(idb), tenant: id.tenant, detach: r.URL.Query().Get("detach") == "1",
		peer: peer{early: api.TakesEarly(r.Header)}}
	project := r.PathValue("project")
	resume := r.URL.Query().Get("resume")
	undo := func() {}
	if resume != "" {
		var err error
		if undo, err = s.sessions.claim(sess, resume, id.tenant, project); err != nil {
			writeError(w, err)
			return
		}
	}
	w.Header().Set(api.HeaderSession, sess.id)
	api.OfferEarly(w.Header()) // serveStream keeps what follows a header
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	c, err := muxconn.Accept(ctx, w, r)
	if err != nil {
		undo()
		return // Accept answered
	}
	mux, err := yamux.Server(c, muxConfig())
	if err != nil {
		undo()
		_ = c.Close()
		return
	}
	sess.mux = mux
	if !s.sessions.add(sess) {
		undo()
		mux.Close()
		return
	}
	defer s.sessions.end(sess)
	if resume != "" {
		s.sessions.resumed(sess, project)
	}
	// A revoked token, or the project passing to another tenant, closes
	// the session (live.go).
	defer s.live.add(id, project, func() { mux.Close() })()
	serveStreams(mux, func(st *yamux.Stream) { s.serveStream(ctx, sess, project, st) })
}

func muxConfig() *yamux.Config {
	conf := yamux.DefaultConfig()
	conf.KeepAliveInterval, conf.ConnectionWriteTimeout = keepAlive, 10*time.Second
	conf.MaxStreamWindowSize = streamWindow
	conf.LogOutput = nil
	conf.Logger = discardLogger{}
	return conf
}

// openToClient opens a stream to the client holding project's session,
// for stream from, relayed to it (openRelayed).
func (ss *sessions) openToClient(project string, h api.StreamHeader, from net.Conn) (net.Conn, error) {
	// The deploying session first: companions ask for credentials (and
	// apps may route to the client) before their up ends, and it owns
	// the project once it does (the same tenant's: ownership is claimed
	// before a session deploys).
	s := ss.provider(project)
	if s == nil {
		return nil, fmt.Errorf("%w: project %s has no client session to carry the client's streams (egress, credentials; a detached deployment has none)", errdefs.ErrFailedPrecondition, project)
	}
	return s.openRelayed(h, from)
}

type discardLogger struct{}

func (discardLogger) Print(...any)          {}
func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}

func (ss *sessions) add(s *session) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stopping {
		return false
	}
	ss.byID[s.id] = s
	ss.downs.Add(1) // until its end has run: closeAll waits for it
	return true
}

// end forgets a session whose connection is gone and takes its deployment
// down unless it is detached.
func (ss *sessions) end(s *session) {
	ss.mu.Lock()
	delete(ss.byID, s.id)
	owned := s.project != "" && ss.byProject[s.project] == s
	if ss.stopping {
		// The server stops, not the client: the deployment stays for the
		// next start, where the client may resume (sessions.json keeps
		// the session).
		ss.mu.Unlock()
		ss.downs.Done()
		if err := s.unmount(); err != nil {
			ss.srv.log.Error("unmount the client-local mounts of a session at shutdown", "session", short(s.id), "err", err)
		}
		return
	}
	if owned {
		delete(ss.byProject, s.project)
	}
	// Another session's up of the project under way takes the
	// deployment over (deploy waited for any removal before it began).
	other := ss.deploying[s.project]
	down := owned && !s.detach && (other == nil || other == s)
	if down {
		removed := make(chan struct{})
		ss.removing[s.project] = removed
		defer func() {
			ss.mu.Lock()
			delete(ss.removing, s.project)
			ss.mu.Unlock()
			close(removed)
		}()
	}
	_ = ss.saveLocked()
	ss.mu.Unlock()
	defer ss.downs.Done()
	// The containers go first, then the mounts they use: an app never
	// sees its client-local mount vanish under it while it runs.
	defer func() {
		if err := s.unmount(); err != nil {
			ss.srv.log.Error("unmount the client-local mounts of an ended session", "session", short(s.id), "err", err)
		}
	}()
	if !down {
		return
	}
	// Not the request's context: it ended with the connection.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ss.srv.log.Info("session ended: removing its deployment", "project", s.project, "session", short(s.id))
	grace := dropGrace
	if err := ss.srv.e.Down(ctx, s.project, engine.DownOptions{Timeout: &grace}); err != nil {
		ss.srv.log.Error("remove the deployment of an ended session", "project", s.project, "err", err)
		return
	}
	ss.srv.tokens.forgetCaretaker(s.project)
	ss.srv.forgetRelayed(s.project)
}

// forRequest is the session a request names (HeaderSession), which must
// be the tenant's and live; nil when none is named.
func (ss *sessions) forRequest(r *http.Request, tenant, project string) (*session, error) {
	id := r.Header.Get(api.HeaderSession)
	if id == "" {
		return nil, nil
	}
	s, ok := ss.settled(id)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ok || s.tenant != tenant {
		return nil, fmt.Errorf("%w: no live session %s… of yours (it ended, or the server restarted)", errdefs.ErrNotFound, short(id))
	}
	if s.project != "" && s.project != project {
		return nil, fmt.Errorf("%w: session %s… deploys project %s, not %s", errdefs.ErrConflict, short(id), s.project, project)
	}
	return s, nil
}

func short(id string) string { return id[:min(8, len(id))] }

// sessionSettle bounds the wait for a session being registered.
const sessionSettle = 2 * time.Second

// settled looks id up, waiting up to sessionSettle for it: a session is
// registered just after its WebSocket upgrade answered, and a client's
// first request on it may come a moment before.
func (ss *sessions) settled(id string) (*session, bool) {
	s, ok := ss.lookup(id)
	for deadline := time.Now().Add(sessionSettle); !ok && time.Now().Before(deadline); s, ok = ss.lookup(id) {
		time.Sleep(10 * time.Millisecond)
	}
	return s, ok
}

func (ss *sessions) lookup(id string) (*session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	return s, ok
}

// own records that s's deployment is project (after a successful up).
func (ss *sessions) own(s *session, project string) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, live := ss.byID[s.id]; !live {
		return fmt.Errorf("%w: session %s… ended during the deploy; its deployment will be removed", errdefs.ErrUnavailable, short(s.id))
	}
	s.project = project
	ss.byProject[project] = s
	return ss.saveLocked()
}

// release drops project's session tie after an explicit down and closes
// that session (the client's agent then exits).
func (ss *sessions) release(project string) {
	ss.mu.Lock()
	s := ss.byProject[project]
	delete(ss.byProject, project)
	_ = ss.saveLocked()
	ss.mu.Unlock()
	if s != nil {
		s.mux.Close()
		// The deployment is down: its client-local mounts go before the
		// down answers, so a client that saw it done finds nothing mounted.
		if err := s.unmount(); err != nil {
			ss.srv.log.Error("unmount the client-local mounts of a released session", "session", short(s.id), "err", err)
		}
	}
}

// endIfIdle closes s if it owns no deployment (its first up failed): its
// client goes, and its client-local mounts with it.
func (ss *sessions) endIfIdle(s *session) {
	ss.mu.Lock()
	idle := s.project == ""
	ss.mu.Unlock()
	if idle {
		s.mux.Close()
	}
}

// deploy makes sess the provider of project's client streams while an
// up runs, once no ended session's deployment of project is being
// removed; done undoes it.
func (ss *sessions) deploy(ctx context.Context, project string, sess *session) (done func(), err error) {
	if err := ss.awaitRemoval(ctx, project, func() { ss.deploying[project] = sess }); err != nil {
		return nil, err
	}
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if ss.deploying[project] == sess {
			delete(ss.deploying, project)
		}
	}, nil
}

// provider is the live session serving project's client streams: the
// one deploying it now, else the one owning it.
func (ss *sessions) provider(project string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s := ss.deploying[project]; s != nil && ss.byID[s.id] == s {
		return s
	}
	return ss.byProject[project]
}

// live is the session id names if it is the tenant's and live.
func (ss *sessions) live(id, tenant string) (*session, error) {
	s, ok := ss.settled(id)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ok || ss.byID[id] != s || s.tenant != tenant {
		return nil, fmt.Errorf("%w: no live session %s… of yours", errdefs.ErrNotFound, short(id))
	}
	return s, nil
}

// of reports the session owning project.
func (ss *sessions) of(project string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s := ss.byProject[project]; s != nil {
		return short(s.id), s.detach
	}
	return "", false
}

// closeAll ends every session at shutdown and waits (bounded) for each
// session's end: its mounts gone; the deployment it owned stays for the
// next start (resume.go).
func (ss *sessions) closeAll() {
	ss.mu.Lock()
	ss.stopping = true
	all := make([]*session, 0, len(ss.byID))
	for _, s := range ss.byID {
		all = append(all, s)
	}
	ss.mu.Unlock()
	for _, s := range all {
		s.mux.Close()
	}
	done := make(chan struct{})
	go func() { ss.downs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
}
