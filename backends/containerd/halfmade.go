package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// A Create that dies half-way (cornus killed mid-up) leaves a container
// directory without container.json, and may have left a network
// attachment (holding its IP and published ports), a network namespace, a
// containerd container and volumes. Create holds a lock for its whole run;
// whoever opens the backend next removes what a dead Create left.

// creatingLock is held (flock) by a Create from before it makes the
// container's directory until it has written container.json.
func (c config) creatingLock(id string) string {
	return filepath.Join(c.dataDir, "containers", "."+id+".creating")
}

// lockCreating takes id's creating lock; release drops and removes it.
func (b *Backend) lockCreating(id string) (release func(), err error) {
	path := b.cfg.creatingLock(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
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
		if same, _ := samePathFile(path, f); same {
			return func() { os.Remove(path); f.Close() }, nil
		}
		f.Close()
	}
}

func samePathFile(path string, f *os.File) (bool, error) {
	a, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	b, err := f.Stat()
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// removeHalfMade removes every container a dead Create left behind, and
// network attachments of containers that no longer exist.
func (b *Backend) removeHalfMade(ctx context.Context) error {
	dir := filepath.Join(b.cfg.dataDir, "containers")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	known := map[string]bool{}
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() {
			// A Create killed before it made the directory leaves only its
			// lock: drop it unless a Create holds it.
			if lockID, ok := strings.CutSuffix(strings.TrimPrefix(id, "."), ".creating"); ok && strings.HasPrefix(id, ".") {
				if _, err := os.Stat(filepath.Join(dir, lockID)); errors.Is(err, os.ErrNotExist) {
					removeStaleLock(filepath.Join(dir, id))
				}
			}
			continue
		}
		known[id] = true
		if _, err := os.Stat(filepath.Join(dir, id, records.File)); err == nil {
			continue
		}
		if err := b.removeIfAbandoned(ctx, id); err != nil {
			return fmt.Errorf("remove half-made container %.12s: %w", id, err)
		}
	}
	atts, err := b.net.ListContainers(ctx)
	if err != nil {
		return err
	}
	for _, c := range atts {
		if !known[c.ID] {
			if _, err := b.net.Detach(ctx, cni.DetachOptions{ContainerID: c.ID, Netns: c.Netns}); err != nil {
				return fmt.Errorf("remove the network attachments of gone container %.12s: %w", c.ID, err)
			}
			_ = b.net.RemoveNetns(ctx, c.ID)
		}
	}
	return nil
}

// removeStaleLock removes a creating lock no Create holds.
func removeStaleLock(path string) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		os.Remove(path)
	}
}

// removeIfAbandoned removes container id if no Create holds its lock.
func (b *Backend) removeIfAbandoned(ctx context.Context, id string) error {
	path := b.cfg.creatingLock(id)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // a Create is at work on it
	}
	defer os.Remove(path)
	ctx = b.ns(ctx)
	if _, err := b.net.Detach(ctx, cni.DetachOptions{ContainerID: id}); err != nil {
		return err
	}
	if err := b.net.RemoveNetns(ctx, id); err != nil {
		return err
	}
	if ctr, err := b.cli.LoadContainer(ctx, id); err == nil {
		if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
			return err
		}
	}
	if vols, err := b.ListVolumes(ctx, backends.ListOptions{Labels: map[string]string{localstore.LabelAnonymousFor: id}}); err == nil {
		for _, v := range vols {
			_ = b.RemoveVolume(ctx, v.Name, true)
		}
	}
	if err := b.records.Remove(id); err != nil && !errdefs.IsNotFound(err) {
		return err
	}
	return os.RemoveAll(b.cfg.containerDir(id))
}
