package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// stateFile is sessions.json: the deployments sessions own, so a server
// killed mid-session knows at its next start what to take down.
type stateFile struct {
	Sessions []sessionState `json:"sessions"`
}

type sessionState struct {
	ID      string `json:"id"`
	Tenant  string `json:"tenant"`
	Project string `json:"project"`
	Detach  bool   `json:"detach,omitempty"`
}

// reconcile runs at startup: every session of the previous run lost its
// connection; the deployments they owned (not detached) wait for their
// clients for the grace, then go (resume.go).
func (ss *sessions) reconcile() error {
	data, err := boundedfile.Read(ss.path, boundedfile.ServerState)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("sessions %s: %w", ss.path, err)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, s := range st.Sessions {
		if s.Project == "" || s.Detach {
			continue
		}
		ss.srv.log.Info("keeping the deployment of a session of the previous run for its client to resume", "project", s.Project, "session", short(s.ID), "grace", ss.grace)
		ss.adopt(s, ss.grace)
	}
	return ss.saveLocked()
}

func (ss *sessions) saveLocked() error {
	var st stateFile
	for _, s := range ss.byProject {
		st.Sessions = append(st.Sessions, sessionState{ID: s.id, Tenant: s.tenant, Project: s.project, Detach: s.detach})
	}
	for _, o := range ss.orphans {
		st.Sessions = append(st.Sessions, o.state)
	}
	return writeFileAtomic(ss.path, st)
}
