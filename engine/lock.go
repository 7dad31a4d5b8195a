package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/cornus-dev/cornus/internal/hostlock"
	"github.com/cornus-dev/cornus/progress"
)

// LockedError says another cornus holds a project's lock: an errdefs
// Conflict (and, through Err, the context error that ended the wait).
type LockedError struct {
	Project string
	PID     int   // the holder's process, 0 when unknown
	Err     error // why waiting stopped
}

func (e *LockedError) Error() string {
	who := "another cornus"
	if e.PID > 0 {
		who = fmt.Sprintf("another cornus (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s is working on project %s; gave up waiting for it: %v", who, e.Project, e.Err)
}

func (e *LockedError) Unwrap() error { return e.Err }

// Conflict makes errdefs.IsConflict true.
func (e *LockedError) Conflict() {}

// lockProject serializes applies and teardowns of one project across
// processes (two `up`s racing would otherwise create duplicate networks:
// dockerd's duplicate-name check is not atomic). It waits while another
// cornus holds the lock, until ctx ends. It returns the unlock.
func (e *Engine) lockProject(ctx context.Context, project string) (func(), error) {
	waited := false
	unlock, err := hostlock.Lock(ctx, e.lockDir, e.b.Name()+"-"+project+".lock", func(pid int) {
		waited = true
		text := "another cornus is working on it"
		if pid > 0 {
			text = fmt.Sprintf("another cornus (pid %d) is working on it", pid)
		}
		e.progressOf(ctx).Event(progress.Event{Kind: "Project", ID: project, Status: "Waiting", Text: text})
	})
	var held *hostlock.HeldError
	if errors.As(err, &held) {
		return nil, &LockedError{Project: project, PID: held.PID, Err: held.Err}
	}
	if err != nil {
		return nil, fmt.Errorf("lock project %s: %w", project, err)
	}
	if waited {
		e.progressOf(ctx).Event(progress.Event{Kind: "Project", ID: project, Status: "Locked", Done: true})
	}
	return unlock, nil
}
