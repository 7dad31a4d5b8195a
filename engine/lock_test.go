package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
)

// named is a backend that only has a name: enough for the project lock.
type named struct{ backends.Backend }

func (named) Name() string { return "test" }

func lockEngine(dir string) *Engine {
	return &Engine{b: named{}, progress: progress.Discard, lockDir: dir}
}

// TestLockConflict: a second locker waits, and when its context ends it
// gets an errdefs Conflict naming the project and the holder's pid — not
// an error that reads like a daemon outage.
func TestLockConflict(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockEngine(dir).lockProject(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = lockEngine(dir).lockProject(ctx, "shop")
	var locked *LockedError
	if !errdefs.IsConflict(err) || !errors.As(err, &locked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v (want a LockedError Conflict ending in the deadline)", err)
	}
	want := fmt.Sprintf("another cornus (pid %d) is working on project shop", os.Getpid())
	if !strings.Contains(err.Error(), want) || locked.PID != os.Getpid() {
		t.Fatalf("error %q does not say %q", err, want)
	}
	// Another project is not blocked.
	other, err := lockEngine(dir).lockProject(ctx, "blog")
	if err != nil {
		t.Fatalf("other project: %v", err)
	}
	other()
}

// TestLockFileLifetime: the holder removes its lock file on unlock, and a
// file left by a crashed holder (flock free) is taken over, not waited on.
func TestLockFileLifetime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "test-shop.lock")
	if err := os.WriteFile(path, []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	unlock, err := lockEngine(dir).lockProject(ctx, "shop")
	if err != nil {
		t.Fatalf("stale lock file was not taken over: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Errorf("lock file says %q, want our pid (%d)", b, os.Getpid())
	}
	unlock()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("lock file left after unlock: %v", err)
	}
}

// TestLockMutualExclusion: many lockers (separate open files, as separate
// processes would have) taking and releasing one project's lock, which
// each release unlinks, are never inside together.
func TestLockMutualExclusion(t *testing.T) {
	dir := t.TempDir()
	var inside atomic.Int32
	var overlapped atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := lockEngine(dir)
			for range 50 {
				unlock, err := e.lockProject(context.Background(), "shop")
				if err != nil {
					t.Error(err)
					return
				}
				if inside.Add(1) > 1 {
					overlapped.Store(true)
				}
				time.Sleep(50 * time.Microsecond)
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if overlapped.Load() {
		t.Fatal("two lockers held the lock at once")
	}
}

// TestLockDirRefused: a lock directory others can write is refused.
func TestLockDirRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := lockEngine(dir).lockProject(context.Background(), "shop"); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("world-writable lock dir: %v", err)
	}
}
