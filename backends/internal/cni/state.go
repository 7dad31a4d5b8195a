package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// maxStateFile bounds what we read back from our own JSON files, so a
// corrupted or replaced file is an error rather than a memory blow-up.
const maxStateFile = 64 << 20

// lockPoll is how often a blocked locker retries; flock itself cannot be
// interrupted by a context.
const lockPoll = 20 * time.Millisecond

// lock takes the exclusive flock on cni/lock that serializes every change
// of the state files, the firewall chains and the hosts files across
// processes. The returned func releases it.
func (m *Manager) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(m.stateDir(), 0o700); err != nil {
		return nil, fmt.Errorf("cni: state dir: %w", err)
	}
	return lockFile(ctx, m.lockPath())
}

// lockFile takes an exclusive flock on path (created if needed), polling
// so that ctx can end the wait.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cni: lock: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil // closing drops the flock
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("cni: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("cni: waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// readJSON decodes path into v; a missing file leaves v untouched. Readers
// need no lock: writers replace files by rename.
func readJSON(path string, v any) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cni: read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cni: read %s: %w", path, err)
	}
	if fi.Size() > maxStateFile {
		return fmt.Errorf("cni: read %s: %d bytes is more than the %d a state file may hold", path, fi.Size(), maxStateFile)
	}
	if err := json.NewDecoder(f).Decode(v); err != nil {
		return fmt.Errorf("cni: decode %s: %w", path, err)
	}
	return nil
}

// writeJSON replaces path atomically (temp file, fsync, rename) so readers
// without the lock never see half a file.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("cni: encode %s: %w", path, err)
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cni: write %s: %w", path, err)
	}
	return nil
}
