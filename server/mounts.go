package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker/mount"
	"github.com/cornus-dev/cornus/caretaker/mount/pin"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// Client-local mounts on a backend whose runtime shares this host's mounts
// (backends.FeatureLocalMounts; remote mode: server/remote.go): the
// client serves each directory
// over 9P on a stream of its session (OpMount, opened by the server); the
// server mounts it (package caretaker/mount: the kernel's 9p where the
// kernel has it, else a FUSE file system backed by a 9P client; detected,
// not assumed) under <DataDir>/mounts/<session>/<index> and hands the
// backend a bind mount of that path. When the session ends the
// deployment's containers go first, then the mounts.

// checkLocalMounts refuses, before anything is created, client-local
// mounts the backend cannot take.
func (s *Server) checkLocalMounts(ctx context.Context) error {
	if s.companionMounts() {
		// The companion mounts them next to the app: the runtime needs
		// /dev/fuse, which the server cannot see from here.
		return s.checkRemote()
	}
	lm, err := backends.Want[backends.LocalMounter](s.b, backends.FeatureLocalMounts, "client-local mounts")
	switch {
	case err != nil && s.remoteVar != "":
		return fmt.Errorf("%w: client-local mounts are not supported by the %s backend outside its remote mode (%s=1 on the server: a caretaker companion mounts them next to the app)",
			errdefs.ErrFailedPrecondition, s.b.Name(), s.remoteVar)
	case err != nil:
		return fmt.Errorf("%w: client-local mounts are not supported by the %s backend: its runtime does not share this server's mounts, and it has no remote mode",
			errdefs.ErrNotImplemented, s.b.Name())
	}
	if err := lm.CheckLocalMounts(ctx); err != nil {
		return err
	}
	if mount.Kind() == "9p" {
		return nil
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: client-local mounts need the kernel's 9p file system or FUSE on the server (/dev/fuse: %v)", errdefs.ErrUnavailable, err)
	}
	return nil
}

// companionMounts reports whether the companions mount client-local
// mounts next to their apps: in remote mode, unless they run beside the
// apps (incus), whose namespaces they cannot reach; there the server
// mounts them on its host, the runtime's, as without remote mode.
func (s *Server) companionMounts() bool { return s.remote && !s.siblings }

// localMounts are one session's mounts.
type localMounts struct {
	dir string // <DataDir>/mounts/<session>

	mu     sync.Mutex
	by     map[int]mount.FS
	pins   map[string]*pin.Pin // pinned single files, by the file they are bound on
	closed bool

	// unmounting is held by unmountAll throughout: a second caller (the
	// session's end racing an explicit down) returns once all are gone.
	unmounting sync.Mutex
}

// mountLocal mounts the client-local mounts of an up on sess and returns
// a copy of p with each one bound into its app.
func (s *Server) mountLocal(ctx context.Context, sess *session, p spec.Project, lms []api.LocalMount) (spec.Project, error) {
	if err := s.checkLocalMounts(ctx); err != nil {
		return p, err
	}
	if sess == nil || sess.detach {
		return p, fmt.Errorf("%w: client-local mounts are served by the client over its deploy-attach session: deploy with a session that is not detached",
			errdefs.ErrFailedPrecondition)
	}
	if err := validLocalMounts(p, lms); err != nil {
		return p, err
	}
	if s.companionMounts() {
		return s.labelRemoteMounts(sess, p, lms), nil
	}
	ms := sess.localMounts(s.mountsDir)
	out := p
	out.Services = maps.Clone(p.Services)
	for _, lm := range lms {
		dir, err := ms.mount(sess, lm)
		if err != nil {
			return p, fmt.Errorf("client-local mount %s of service %s: %w", lm.Source, lm.Service, err)
		}
		src := dir
		if lm.File != "" {
			if src, err = ms.pin(dir, lm); err != nil {
				return p, fmt.Errorf("client-local mount %s of service %s: %w", lm.Source, lm.Service, err)
			}
		}
		a := out.Services[lm.Service]
		a.Mounts = append(slices.Clone(a.Mounts), spec.Mount{Source: src, Target: lm.Target, ReadOnly: lm.ReadOnly})
		out.Services[lm.Service] = a
	}
	return out, nil
}

// validLocalMounts checks what a client sent: bounded, known services,
// absolute targets, file names that are one component, one mode per
// export.
func validLocalMounts(p spec.Project, lms []api.LocalMount) error {
	if len(lms) > api.MaxLocalMounts {
		return fmt.Errorf("%w: %d client-local mounts: at most %d", errdefs.ErrInvalidArgument, len(lms), api.MaxLocalMounts)
	}
	type mode struct {
		file string
		ro   bool
	}
	modes := map[int]mode{}
	for i, lm := range lms {
		at := fmt.Sprintf("localMounts[%d]", i)
		if _, ok := p.Services[lm.Service]; !ok {
			return fmt.Errorf("%w: %s: no service %q", errdefs.ErrInvalidArgument, at, lm.Service)
		}
		if lm.Index < 0 || lm.Index >= api.MaxLocalMounts {
			return fmt.Errorf("%w: %s: index %d", errdefs.ErrInvalidArgument, at, lm.Index)
		}
		if !path.IsAbs(lm.Target) || path.Clean(lm.Target) == "/" {
			return fmt.Errorf("%w: %s: target %q must be an absolute path below /", errdefs.ErrInvalidArgument, at, lm.Target)
		}
		if f := lm.File; f != "" && (f == "." || f == ".." || strings.ContainsAny(f, "/\x00")) {
			return fmt.Errorf("%w: %s: file %q is not a file name", errdefs.ErrInvalidArgument, at, f)
		}
		m := mode{lm.File, lm.ReadOnly}
		if prev, ok := modes[lm.Index]; ok && prev.file != m.file {
			return fmt.Errorf("%w: %s: export %d is both a directory and a file", errdefs.ErrInvalidArgument, at, lm.Index)
		}
		modes[lm.Index] = m
	}
	return nil
}

// localMounts is the session's mounts, made on first use.
func (sess *session) localMounts(root string) *localMounts {
	sess.mountMu.Lock()
	defer sess.mountMu.Unlock()
	if sess.mounts == nil {
		sess.mounts = &localMounts{dir: filepath.Join(root, sess.id), by: map[int]mount.FS{}, pins: map[string]*pin.Pin{}}
	}
	return sess.mounts
}

// mount mounts export lm.Index of sess's client (once per session) and
// returns its mountpoint.
func (ms *localMounts) mount(sess *session, lm api.LocalMount) (string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.closed {
		return "", fmt.Errorf("%w: the session ended", errdefs.ErrUnavailable)
	}
	dir := filepath.Join(ms.dir, strconv.Itoa(lm.Index))
	if _, ok := ms.by[lm.Index]; ok {
		return dir, nil
	}
	// Private parents: the mount allows other users (the apps' users),
	// so only root may walk to it.
	if err := os.MkdirAll(ms.dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	conn, err := openStream(sess.mux, api.StreamHeader{Op: api.OpMount, Mount: &api.MountOpen{Index: lm.Index}})
	if err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("open the client's export: %w", err)
	}
	// The mount outlives the request: the session's end unmounts it.
	fs, err := mount.Mount(context.Background(), conn, dir, mount.Options{ReadOnly: lm.ReadOnly})
	if err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	ms.by[lm.Index] = fs
	return dir, nil
}

// repinEvery is how often a pinned file's path is looked at again: an
// edit by rename (a new regular file) is bound at the container's next
// start.
const repinEvery = time.Second

// pin binds the single file lm.File of the mount at dir onto a private
// file of the server (package pin: that inode, never a path the client
// could make a symlink), and returns that file: what the container binds.
func (ms *localMounts) pin(dir string, lm api.LocalMount) (string, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.closed {
		return "", fmt.Errorf("%w: the session ended", errdefs.ErrUnavailable)
	}
	pinned := filepath.Join(ms.dir, fmt.Sprintf("%d-%s.pin", lm.Index, lm.File))
	if ms.pins[pinned] != nil {
		return pinned, nil
	}
	pn, err := pin.Follow(filepath.Join(dir, lm.File), pinned, repinEvery)
	if err != nil {
		return "", err
	}
	ms.pins[pinned] = pn
	return pinned, nil
}

// refreshPins pins again each single file its client replaced with
// another regular file (pin.Pin.Refresh), at once rather than at the
// next look.
func (ms *localMounts) refreshPins() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, p := range ms.pins {
		_, _ = p.Refresh()
	}
}

// refreshPins refreshes the pins of the session serving project's
// client-local mounts, if any.
func (ss *sessions) refreshPins(project string) {
	sess := ss.provider(project)
	if sess == nil {
		return
	}
	sess.mountMu.Lock()
	ms := sess.mounts
	sess.mountMu.Unlock()
	if ms != nil {
		ms.refreshPins()
	}
}

// unmountAll unmounts every mount of the session and removes the
// mountpoints (rmdir only: never a recursive removal that could reach
// through a mount into the client's files).
func (ms *localMounts) unmountAll() error {
	ms.unmounting.Lock()
	defer ms.unmounting.Unlock()
	ms.mu.Lock()
	ms.closed = true
	by, pins := ms.by, ms.pins
	ms.by, ms.pins = map[int]mount.FS{}, map[string]*pin.Pin{}
	ms.mu.Unlock()
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(pins)) {
		errs = append(errs, pins[p].Remove())
	}
	for _, i := range slices.Sorted(maps.Keys(by)) {
		if err := by[i].Unmount(); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(by[i].Mountpoint()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(ms.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sweepMounts detaches what a previous run of the server left mounted
// (it was killed: its FUSE loops or 9p pipes died with it) and removes
// the empty mountpoints.
func sweepMounts(root string) error {
	if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := mount.Sweep(root)
	sessions, _ := os.ReadDir(root)
	for _, sd := range sessions {
		dir := filepath.Join(root, sd.Name())
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
		_ = os.Remove(dir)
	}
	if err != nil {
		return fmt.Errorf("detach the client-local mounts of a previous run: %w", err)
	}
	return nil
}
