package halfmade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
)

// Store is a backend's containers directory: a directory per container,
// holding the record file once its Create finished.
type Store struct {
	Dir    string // <data dir>/containers
	Record string // the record's file name in a container's directory
	Net    Attachments
	// Volumes removes the anonymous volumes a dead Create made.
	Volumes Volumes
}

// Attachments are the backend's network attachments (a *cni.Manager).
type Attachments interface {
	ListContainers(ctx context.Context) ([]cni.Container, error)
	Detach(ctx context.Context, o cni.DetachOptions) (cni.DetachResult, error)
	RemoveNetns(ctx context.Context, id string) error
}

// Volumes are the backend's volume verbs.
type Volumes interface {
	ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error)
	RemoveVolume(ctx context.Context, name string, force bool) error
}

// lockPath is id's creating lock, beside its directory.
func (s Store) lockPath(id string) string { return filepath.Join(s.Dir, "."+id+".creating") }

// Lock takes id's creating lock; release drops and removes it.
func (s Store) Lock(id string) (release func(), err error) {
	path := s.lockPath(id)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		// A sweep may have removed the file between open and flock: the
		// lock must be on the file the path names.
		if samePathFile(path, f) {
			return func() { os.Remove(path); f.Close() }, nil
		}
		f.Close()
	}
}

func samePathFile(path string, f *os.File) bool {
	a, err := os.Stat(path)
	if err != nil {
		return false
	}
	b, err := f.Stat()
	return err == nil && os.SameFile(a, b)
}

// DropStaleLock removes id's creating lock unless a Create holds it (one
// killed after it wrote the record leaves its lock).
func (s Store) DropStaleLock(id string) {
	f, err := os.OpenFile(s.lockPath(id), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		os.Remove(s.lockPath(id))
	}
}

func (s Store) whole(id string) bool {
	_, err := os.Stat(filepath.Join(s.Dir, id, s.Record))
	return err == nil
}

// Sweep removes every container a dead Create left behind (Sweep
// detaches its networks, remove takes away the backend's own parts, then
// Sweep removes its anonymous volumes and its directory), stale creating
// locks, and the network attachments of containers that no longer exist.
func (s Store) Sweep(ctx context.Context, remove func(ctx context.Context, id string) error) error {
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	known := map[string]bool{}
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() {
			// A Create killed before it made the directory, or after it
			// wrote the record, leaves its lock.
			if lockID, ok := strings.CutSuffix(strings.TrimPrefix(id, "."), ".creating"); ok && strings.HasPrefix(id, ".") {
				if _, err := os.Stat(filepath.Join(s.Dir, lockID)); errors.Is(err, os.ErrNotExist) || s.whole(lockID) {
					s.DropStaleLock(lockID)
				}
			}
			continue
		}
		known[id] = true
		if s.whole(id) {
			continue
		}
		if err := s.removeIfAbandoned(ctx, id, remove); err != nil {
			return fmt.Errorf("remove half-made container %.12s: %w", id, err)
		}
	}
	atts, err := s.Net.ListContainers(ctx)
	if err != nil {
		return err
	}
	for _, c := range atts {
		if !known[c.ID] {
			if _, err := s.Net.Detach(ctx, cni.DetachOptions{ContainerID: c.ID, Netns: c.Netns}); err != nil {
				return fmt.Errorf("remove the network attachments of gone container %.12s: %w", c.ID, err)
			}
			_ = s.Net.RemoveNetns(ctx, c.ID)
		}
	}
	return nil
}

// removeIfAbandoned removes container id if no Create holds its lock.
func (s Store) removeIfAbandoned(ctx context.Context, id string, remove func(context.Context, string) error) error {
	path := s.lockPath(id)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // a Create is at work on it
	}
	defer os.Remove(path)
	// A Create may have finished (and dropped its lock) since the caller
	// looked: a container with its record is whole.
	if s.whole(id) {
		return nil
	}
	if err := s.detach(ctx, id); err != nil {
		return err
	}
	if err := s.Net.RemoveNetns(ctx, id); err != nil {
		return err
	}
	if err := remove(ctx, id); err != nil {
		return err
	}
	if vols, err := s.Volumes.ListVolumes(ctx, backends.ListOptions{Labels: map[string]string{localstore.LabelAnonymousFor: id}}); err == nil {
		for _, v := range vols {
			_ = s.Volumes.RemoveVolume(ctx, v.Name, true)
		}
	}
	return os.RemoveAll(filepath.Join(s.Dir, id))
}

// detach removes id's network attachments. The dead Create's CNI plugins
// are processes of their own and may still be adding its port mappings
// (a chain still referenced cannot be deleted yet): a few tries, a bounded
// wait.
func (s Store) detach(ctx context.Context, id string) error {
	var err error
	for try := 0; try < 5; try++ {
		if _, err = s.Net.Detach(ctx, cni.DetachOptions{ContainerID: id}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try+1) * 200 * time.Millisecond):
		}
	}
	return err
}
