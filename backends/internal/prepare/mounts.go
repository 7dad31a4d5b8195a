package prepare

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/spec"
)

// defaultNetwork is where a container without networks goes (Docker's
// default bridge).
const defaultNetwork = "bridge"

// Host is what a backend lends the preparation: its name (for messages),
// its volumes and networks, and the CNI manager under them.
type Host struct {
	Backend  string
	Volumes  *localstore.Volumes
	Networks *localstore.Networks
	CNI      *cni.Manager
}

// MountsResult is the container's mounts: as the OCI spec takes them, as
// inspect shows them, and the anonymous volumes made for it.
type MountsResult struct {
	Specs     []specs.Mount
	Points    []backends.MountPoint
	Anonymous []string // removed with the container when asked (rm -v)
}

// Mounts makes binds, volumes (named, anonymous) and tmpfs mounts for
// container id. What it made that must go if Create fails is appended to
// undo, also on error.
func (h Host) Mounts(id string, cs backends.ContainerSpec, undo *[]func()) (MountsResult, error) {
	var st MountsResult
	var out []specs.Mount
	for _, m := range cs.Binds {
		if m.CreateHostPath {
			if err := backends.MakeBindSource(m.Source); err != nil {
				return MountsResult{}, err
			}
		}
		if p := strings.TrimPrefix(m.Propagation, "r"); p == "shared" {
			if err := ocispec.EnsureShared(m.Source); err != nil {
				return MountsResult{}, err
			}
		}
		out = append(out, ocispec.BindMount(m.Source, m.Target, m.ReadOnly, m.Propagation))
		st.Points = append(st.Points, backends.MountPoint{Type: "bind", Source: m.Source, Destination: m.Target, ReadOnly: m.ReadOnly})
	}
	for _, v := range cs.Volumes {
		var vol backends.Volume
		var err error
		if v.Name == "" {
			vol, err = h.Volumes.Anonymous(id, v.Driver, v.DriverOpts)
			if err == nil {
				name := vol.Name
				st.Anonymous = append(st.Anonymous, name)
				*undo = append(*undo, func() { _ = h.Volumes.Remove(context.Background(), name, true) })
			}
		} else {
			vol, err = h.Volumes.Ensure(context.Background(), backends.VolumeSpec{Volume: backendsVolume(v)})
			if err == nil && v.Inherited {
				st.Anonymous = append(st.Anonymous, vol.Name) // this container's now
			}
		}
		if err == nil {
			err = h.Volumes.MountDevice(vol)
		}
		if err != nil {
			return MountsResult{}, err
		}
		src := vol.Mountpoint
		if v.Subpath != "" {
			src = filepath.Join(src, filepath.Clean("/"+v.Subpath))
		}
		out = append(out, ocispec.BindMount(src, v.Target, v.ReadOnly, ""))
		st.Points = append(st.Points, backends.MountPoint{Type: "volume", Name: vol.Name, Source: src, Destination: v.Target, ReadOnly: v.ReadOnly})
	}
	for _, t := range cs.Tmpfs {
		opts := []string{"nosuid", "nodev", "noexec"}
		if t.Size > 0 {
			opts = append(opts, fmt.Sprintf("size=%d", t.Size))
		}
		if t.Mode != 0 {
			opts = append(opts, fmt.Sprintf("mode=%o", t.Mode))
		}
		out = append(out, specs.Mount{Destination: t.Target, Type: "tmpfs", Source: "tmpfs", Options: opts})
		st.Points = append(st.Points, backends.MountPoint{Type: "tmpfs", Destination: t.Target})
	}
	st.Specs = out
	return st, nil
}

// Files writes secrets and configs under the container's directory,
// to be bind-mounted read-only at their targets.
func Files(dir string, files []backends.File) ([]specs.Mount, error) {
	var out []specs.Mount
	for i, f := range files {
		p := filepath.Join(dir, "files", fmt.Sprint(i))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, f.Content, os.FileMode(f.Mode)); err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Target, err)
		}
		if err := os.Chmod(p, os.FileMode(f.Mode)); err != nil {
			return nil, err
		}
		if err := os.Chown(p, f.UID, f.GID); err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Target, err)
		}
		out = append(out, ocispec.BindMount(p, f.Target, true, ""))
	}
	return out, nil
}

// backendsVolume is the volume a mount names (created if missing, with
// its driver options when the project does not declare it).
func backendsVolume(v backends.VolumeMount) spec.Volume {
	return spec.Volume{Name: v.Name, Driver: v.Driver, DriverOpts: v.DriverOpts}
}
