package server

import (
	"sync"
	"time"
)

// Everything long-lived a token opened — requests still streaming
// (logs -f, events, exec, attach), sessions, caretaker relays — is
// registered here with what ends it. A watcher re-reads the tokens file
// and ends whatever a revoked token, a down, or another tenant's claim
// no longer allows, within revokeTick.

// revokeTick is how often the watcher looks.
const revokeTick = 250 * time.Millisecond

type liveEntry struct {
	id      identity
	project string // "" for a request that names none
	end     func()
}

type liveSet struct {
	mu sync.Mutex
	by map[*liveEntry]struct{}
}

// add registers what end closes; the returned func unregisters it.
func (l *liveSet) add(id identity, project string, end func()) func() {
	e := &liveEntry{id: id, project: project, end: end}
	l.mu.Lock()
	if l.by == nil {
		l.by = map[*liveEntry]struct{}{}
	}
	l.by[e] = struct{}{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.by, e)
		l.mu.Unlock()
	}
}

// sweep ends (and forgets) every entry allowed no more.
func (l *liveSet) sweep(allowed func(*liveEntry) bool) {
	l.mu.Lock()
	var ended []*liveEntry
	for e := range l.by {
		if !allowed(e) {
			ended = append(ended, e)
			delete(l.by, e)
		}
	}
	l.mu.Unlock()
	for _, e := range ended {
		e.end()
	}
}

// stillAllowed says whether a live entry's identity may go on: its token
// stands, and its project is still its tenant's (a caretaker: still its
// generation; a client: not another tenant's, or unowned as when it
// began).
func (s *Server) stillAllowed(e *liveEntry) bool {
	if !s.tokens.valid(e.id) {
		return false
	}
	if g := e.id.caretaker; g != nil {
		return s.owners.holds(*g)
	}
	if e.project == "" {
		return true
	}
	r, ok := s.owners.get(e.project)
	return !ok || r.Tenant == e.id.tenant
}

// watch sweeps the live entries every revokeTick until stop closes.
func (s *Server) watch(stop <-chan struct{}) {
	every(stop, revokeTick, func() {
		if err := s.tokens.reload(); err != nil {
			s.log.Warn("tokens file: keeping the tokens last read", "err", err)
		}
		s.live.sweep(s.stillAllowed)
	})
}

// every calls f each period until stop closes.
func every(stop <-chan struct{}, period time.Duration, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f()
		}
	}
}
