package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockProject serializes applies and teardowns of one project across
// processes (two `up`s racing would otherwise create duplicate networks:
// dockerd's duplicate-name check is not atomic). It returns the unlock.
func (e *Engine) lockProject(ctx context.Context, project string) (func(), error) {
	if err := os.MkdirAll(e.lockDir, 0o700); err != nil {
		return nil, fmt.Errorf("lock project %s: %w", project, err)
	}
	path := filepath.Join(e.lockDir, e.b.Name()+"-"+project+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock project %s: %w", project, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if err != syscall.EWOULDBLOCK {
			_ = f.Close()
			return nil, fmt.Errorf("lock project %s: %w", project, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another cornus working on project %s: %w", project, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
