package containerd

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/containerd/containerd/v2/core/mount"
	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// signalNumber turns a resolved signal name into its number.
func signalNumber(name string) (syscall.Signal, bool) {
	if name == "" {
		return 0, false
	}
	n, ok := spec.ParseSignal(name)
	return syscall.Signal(n), ok
}

// freePort picks a free host port now, for a publish without one (portmap
// needs a number; Docker picks from the ephemeral range the same way).
func freePort(proto, hostIP string) (uint16, error) {
	if hostIP == "" {
		hostIP = "0.0.0.0"
	}
	if proto == "udp" {
		c, err := net.ListenPacket("udp", net.JoinHostPort(hostIP, "0"))
		if err != nil {
			return 0, fmt.Errorf("ports: pick a free udp port: %w", err)
		}
		defer c.Close()
		return uint16(c.LocalAddr().(*net.UDPAddr).Port), nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		return 0, fmt.Errorf("ports: pick a free tcp port: %w", err)
	}
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port), nil
}

// backendsVolume is the volume a mount names (created if missing, with
// its driver options when the project does not declare it).
func backendsVolume(v backends.VolumeMount) spec.Volume {
	return spec.Volume{Name: v.Name, Driver: v.Driver, DriverOpts: v.DriverOpts}
}

// backendsNetwork is a network known by runtime name only.
func backendsNetwork(name string) spec.Network { return spec.Network{Name: name} }

// seedVolumes copies what the image holds at a volume's target into the
// volume when it is empty (Docker's copy-up), unless noCopy.
func (b *Backend) seedVolumes(ctx context.Context, id string, cs backends.ContainerSpec, mounts []backends.MountPoint) error {
	var todo []backends.MountPoint
	for i, m := range mounts {
		if m.Type != "volume" {
			continue
		}
		if v := volumeMountFor(cs, m.Destination); v != nil && (v.NoCopy || v.Subpath != "") {
			continue
		}
		if empty, _ := isEmptyDir(m.Source); empty {
			todo = append(todo, mounts[i])
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ms, err := b.cli.SnapshotService(b.cfg.snapshotter).Mounts(ctx, id)
	if err != nil {
		return fmt.Errorf("seed volumes: %w", err)
	}
	return mount.WithReadonlyTempMount(ctx, ms, func(root string) error {
		for _, m := range todo {
			src := filepath.Join(root, filepath.Clean("/"+m.Destination))
			if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
				continue
			}
			if err := copyTree(src, m.Source); err != nil {
				return fmt.Errorf("seed volume %s from the image's %s: %w", m.Name, m.Destination, err)
			}
		}
		return nil
	})
}

func volumeMountFor(cs backends.ContainerSpec, target string) *backends.VolumeMount {
	for i := range cs.Volumes {
		if cs.Volumes[i].Target == target {
			return &cs.Volumes[i]
		}
	}
	return nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && err != nil, nil
}

// copyTree copies a directory tree, keeping modes, owners and links.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil && !os.IsExist(err) {
				return err
			}
		case fi.IsDir():
			if err := os.MkdirAll(target, fi.Mode().Perm()); err != nil {
				return err
			}
			_ = os.Chmod(target, fi.Mode().Perm())
		case fi.Mode().IsRegular():
			if err := copyFile(p, target, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			return nil // devices, sockets: not seeded
		}
		if st != nil {
			_ = os.Lchown(target, int(st.Uid), int(st.Gid))
		}
		return nil
	})
}

// notRunning is the Conflict for a verb that needs a running container.
func notRunning(name string) error {
	return fmt.Errorf("container %s is not running: %w", name, errdefs.ErrConflict)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
