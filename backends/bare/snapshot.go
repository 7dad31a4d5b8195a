package bare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/pkg/archive"
	"github.com/containerd/containerd/v2/pkg/archive/compression"
	"github.com/containerd/continuity/fs"
	"github.com/containerd/errdefs"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/identity"
)

// snapshotter unpacks image layers under <data>/bare/layers and gives
// each container its root filesystem:
//   - overlayfs (default): every layer is unpacked once into its own
//     directory, whiteouts converted to overlay's (0:0 character devices,
//     trusted.overlay.opaque), and a container's rootfs is an overlay
//     mount of its image's layers under its own upper directory;
//   - native: an image's layers are flattened into one directory
//     (whiteouts applied by deleting) and each container gets a copy.
//
// A layer directory is named from its diff ID (overlay) or the image's
// chain ID (native), unpacked in a temporary directory and renamed into
// place, so a crash never leaves a half-unpacked layer that looks whole,
// and two processes unpacking the same layer do not collide.
type snapshotter struct {
	kind    string
	dir     string
	content content.Store
}

// keyLen is how many hex digits of a digest name a layer directory: short
// keeps an overlay mount's option string (one page) under its limit for
// images of dozens of layers.
const keyLen = 24

// keys are the layer directories an image's containers use, lowest first.
func (s *snapshotter) keys(r resolved) []string {
	ids := r.config.RootFS.DiffIDs
	if s.kind == SnapshotterNative {
		return []string{"n" + identity.ChainID(ids).Encoded()[:keyLen]}
	}
	out := make([]string, len(ids))
	for i, d := range ids {
		out[i] = "o" + d.Encoded()[:keyLen]
	}
	return out
}

func (s *snapshotter) layerDir(key string) string { return filepath.Join(s.dir, key, "fs") }

// unpack makes an image's layers ready and returns their keys.
func (s *snapshotter) unpack(ctx context.Context, r resolved) ([]string, error) {
	keys := s.keys(r)
	if s.kind == SnapshotterNative {
		if s.ready(keys[0]) {
			return keys, nil
		}
		err := s.build(keys[0], func(dir string) error {
			for i := range r.manifest.Layers {
				if err := s.apply(ctx, r, i, dir, false); err != nil {
					return err
				}
			}
			return nil
		})
		return keys, err
	}
	for i, k := range keys {
		if s.ready(k) {
			continue
		}
		if err := s.build(k, func(dir string) error { return s.apply(ctx, r, i, dir, true) }); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func (s *snapshotter) ready(key string) bool {
	_, err := os.Stat(s.layerDir(key))
	return err == nil
}

// build fills a fresh directory and renames it into place as key.
func (s *snapshotter) build(key string, fill func(dir string) error) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	tmp := filepath.Join(s.dir, ".tmp-"+key+"-"+hex.EncodeToString(suffix))
	if err := os.MkdirAll(filepath.Join(tmp, "fs"), 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	if err := fill(filepath.Join(tmp, "fs")); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, key)); err != nil {
		_ = os.RemoveAll(tmp)
		if s.ready(key) {
			return nil // another process unpacked it first
		}
		return fmt.Errorf("unpack: %w", err)
	}
	return nil
}

// apply unpacks layer i of the image into dir, checking its diff ID.
func (s *snapshotter) apply(ctx context.Context, r resolved, i int, dir string, overlay bool) error {
	desc := r.manifest.Layers[i]
	ra, err := s.content.ReaderAt(ctx, desc)
	if err != nil {
		return fmt.Errorf("unpack layer %s of %s: %w", desc.Digest, r.name.Name, err)
	}
	defer ra.Close()
	ds, err := compression.DecompressStream(content.NewReader(ra))
	if err != nil {
		return fmt.Errorf("unpack layer %s of %s: %w", desc.Digest, r.name.Name, err)
	}
	defer ds.Close()
	verifier := digest.Canonical.Digester()
	tee := io.TeeReader(ds, verifier.Hash())
	var opts []archive.ApplyOpt
	if overlay {
		opts = append(opts, archive.WithConvertWhiteout(archive.OverlayConvertWhiteout))
	}
	if _, err := archive.Apply(ctx, dir, tee, opts...); err != nil {
		return fmt.Errorf("unpack layer %s of %s: %w", desc.Digest, r.name.Name, err)
	}
	if _, err := io.Copy(io.Discard, tee); err != nil { // tar padding
		return fmt.Errorf("unpack layer %s of %s: %w", desc.Digest, r.name.Name, err)
	}
	if got, want := verifier.Digest(), r.config.RootFS.DiffIDs[i]; got != want {
		return fmt.Errorf("unpack layer %s of %s: content is %s, the image says %s: %w", desc.Digest, r.name.Name, got, want, errdefs.ErrDataLoss)
	}
	return nil
}

// prepare makes a container's root filesystem at rootfs from its layers
// (overlay: an upper and a work directory beside it, mounted; native: a
// copy).
func (s *snapshotter) prepare(keys []string, rootfs, upper, work string) error {
	if s.kind == SnapshotterNative {
		if err := os.MkdirAll(rootfs, 0o755); err != nil {
			return err
		}
		if err := fs.CopyDir(rootfs, s.layerDir(keys[0])); err != nil {
			return fmt.Errorf("copy the image into the container's root: %w", err)
		}
		return nil
	}
	for _, d := range []string{rootfs, upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return s.mount(keys, rootfs, upper, work)
}

// mount mounts a container's overlay root unless it is mounted (after a
// reboot it is not); native roots are plain directories.
func (s *snapshotter) mount(keys []string, rootfs, upper, work string) error {
	if s.kind == SnapshotterNative || mounted(rootfs) {
		return nil
	}
	lower := make([]string, len(keys))
	for i, k := range keys {
		lower[len(keys)-1-i] = s.layerDir(k) // overlay lists the top layer first
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(lower, ":"), upper, work)
	if _, err := os.Stat("/sys/module/overlay/parameters/index"); err == nil {
		opts += ",index=off"
	}
	if len(opts) >= os.Getpagesize() {
		return fmt.Errorf("mount the container's root: %d layers make overlay options longer than a page; use %s=%s: %w",
			len(keys), EnvSnapshotter, SnapshotterNative, errdefs.ErrNotImplemented)
	}
	if err := syscall.Mount("overlay", rootfs, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount the container's overlay root (use %s=%s where overlayfs is unavailable): %w", EnvSnapshotter, SnapshotterNative, err)
	}
	return nil
}

// unmount unmounts a container's root if mounted.
func unmount(rootfs string) error {
	for i := 0; mounted(rootfs); i++ {
		err := syscall.Unmount(rootfs, 0)
		if err == nil {
			continue
		}
		if errors.Is(err, syscall.EBUSY) && i < 50 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err := syscall.Unmount(rootfs, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("unmount %s: %w", rootfs, err)
		}
	}
	return nil
}

// mounted reports whether dir is a mount point (its device differs from
// its parent's).
func mounted(dir string) bool {
	var a, b syscall.Stat_t
	if syscall.Lstat(dir, &a) != nil || syscall.Lstat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

// collect removes layer directories not in keep (and temporary ones an
// unpack that died left, once they are old).
func (s *snapshotter) collect(keep map[string]bool) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp-") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				_ = os.RemoveAll(filepath.Join(s.dir, name))
			}
			continue
		}
		if keep[name] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, name)); err != nil {
			return fmt.Errorf("remove unused layer %s: %w", name, err)
		}
	}
	return nil
}
