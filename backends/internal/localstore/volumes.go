package localstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Volumes are directories: <dir>/<name>/_data, with the
// volume's labels and options in volume.json beside. The local driver's
// options are honored as dockerd honors them: o=bind (the volume is the
// device path), type=tmpfs (a tmpfs mounted on _data at creation), and any
// other type+device (mounted on _data when a container first uses it,
// unmounted when the volume is removed). The host policy has refused
// the ones that take host power unless allowed.

type volumeMeta struct {
	Name    string            `json:"name"`
	Driver  string            `json:"driver"`
	Options map[string]string `json:"options,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Created time.Time         `json:"created"`
}

// Volumes is a backend's local-driver volumes, one directory each under
// dir. Its methods are the backends.Backend volume verbs.
type Volumes struct {
	dir     string
	backend string
	inUse   InUse
}

// InUse names a container that mounts the volume, or "" (Remove without
// force refuses a volume in use). The backend answers it from its
// containers.
type InUse func(ctx context.Context, volume string) (container string, err error)

// NewVolumes keeps volumes under dir; backend names the backend in
// messages. It does no I/O.
func NewVolumes(dir, backend string, inUse InUse) *Volumes {
	return &Volumes{dir: dir, backend: backend, inUse: inUse}
}

func (s *Volumes) volumeDir(name string) string { return filepath.Join(s.dir, name) }

// mountpoint is where a volume's data is on the host.
func (m volumeMeta) mountpoint(dir string) string {
	if isBind(m.Options) {
		return m.Options["device"]
	}
	return filepath.Join(dir, "_data")
}

func isBind(o map[string]string) bool {
	return o["type"] == "none" || slices.Contains(strings.Split(o["o"], ","), "bind")
}

// Ensure returns the volume labelled for (project, key) or named so,
// creating it if missing (backends.Backend.EnsureVolume).
func (s *Volumes) Ensure(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.RuntimeName()
	if err := ValidName(name); err != nil {
		return backends.Volume{}, err
	}
	if m, err := s.readVolume(name); err == nil {
		return m.volume(s.volumeDir(name)), nil
	}
	if v.Volume.External {
		return backends.Volume{}, fmt.Errorf("volume %s is declared external but does not exist; create it first: %w", name, errdefs.ErrNotFound)
	}
	labels := map[string]string{}
	maps.Copy(labels, v.Volume.Labels)
	maps.Copy(labels, v.Labels)
	if v.Project != "" {
		labels[backends.ComposeProject], labels[backends.ComposeVolume] = v.Project, v.Key
		labels[backends.LabelProject], labels[backends.LabelVolume] = v.Project, v.Key
	}
	return s.create(name, v.Volume.Driver, v.Volume.DriverOpts, labels)
}

func (s *Volumes) create(name, driver string, opts, labels map[string]string) (backends.Volume, error) {
	switch {
	case driver != "" && driver != "local":
		return backends.Volume{}, fmt.Errorf("volume %s: driver %q: only the local driver is supported by the %s backend: %w", name, driver, s.backend, errdefs.ErrNotImplemented)
	case len(opts) > 0 && !isBind(opts) && opts["type"] != "tmpfs" && (opts["type"] == "" || opts["device"] == ""):
		return backends.Volume{}, fmt.Errorf("volume %s: driver options %v: the local driver needs type and device (or o=bind, or type=tmpfs): %w", name, opts, errdefs.ErrInvalidArgument)
	}
	dir := s.volumeDir(name)
	m := volumeMeta{Name: name, Driver: "local", Options: opts, Labels: labels, Created: time.Now().UTC()}
	if err := os.MkdirAll(filepath.Join(dir, "_data"), 0o755); err != nil {
		return backends.Volume{}, fmt.Errorf("create volume %s: %w", name, err)
	}
	if opts["type"] == "tmpfs" {
		if err := syscall.Mount("tmpfs", filepath.Join(dir, "_data"), "tmpfs", 0, opts["o"]); err != nil {
			_ = os.RemoveAll(dir)
			return backends.Volume{}, fmt.Errorf("create volume %s: mount tmpfs: %w", name, err)
		}
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "volume.json"), data, 0o600); err != nil {
		return backends.Volume{}, fmt.Errorf("create volume %s: %w", name, err)
	}
	return m.volume(dir), nil
}

// Anonymous creates a volume for one container, labelled
// LabelAnonymousFor it, to be removed with it when asked (rm -v).
func (s *Volumes) Anonymous(containerID string, driver string, opts map[string]string) (backends.Volume, error) {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return s.create(hex.EncodeToString(buf), driver, opts, map[string]string{LabelAnonymousFor: containerID})
}

// LabelAnonymousFor labels an anonymous volume with its container's ID.
const LabelAnonymousFor = "cornus.anonymous-for"

// MountDevice mounts a device volume on first use (the local driver's
// type+device options); a volume mounted already is left as it is.
func (s *Volumes) MountDevice(v backends.Volume) error {
	o := v.Options
	if len(o) == 0 || isBind(o) || o["type"] == "tmpfs" {
		return nil
	}
	data := v.Mountpoint
	var dataSt, dirSt syscall.Stat_t
	if syscall.Stat(data, &dataSt) == nil && syscall.Stat(filepath.Dir(data), &dirSt) == nil && dataSt.Dev != dirSt.Dev {
		return nil // mounted
	}
	if err := syscall.Mount(o["device"], data, o["type"], 0, o["o"]); err != nil {
		return fmt.Errorf("volume %s: mount %s (type %s): %w", v.Name, o["device"], o["type"], err)
	}
	return nil
}

func (s *Volumes) readVolume(name string) (volumeMeta, error) {
	var m volumeMeta
	data, err := os.ReadFile(filepath.Join(s.volumeDir(name), "volume.json"))
	if os.IsNotExist(err) {
		return m, fmt.Errorf("volume %s: %w", name, errdefs.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("volume %s: %w", name, err)
	}
	err = json.Unmarshal(data, &m)
	return m, err
}

func (m volumeMeta) volume(dir string) backends.Volume {
	return backends.Volume{Name: m.Name, Driver: m.Driver, Mountpoint: m.mountpoint(dir), Labels: m.Labels, Options: m.Options, Created: m.Created}
}

// List lists volumes whose labels match (backends.Backend.ListVolumes).
func (s *Volumes) List(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	var out []backends.Volume
	for _, e := range entries {
		m, err := s.readVolume(e.Name())
		if err != nil || !backends.MatchLabels(m.Labels, o.Labels) {
			continue
		}
		out = append(out, m.volume(s.volumeDir(e.Name())))
	}
	return out, nil
}

// Remove removes a volume no container uses (force: even then)
// (backends.Backend.RemoveVolume).
func (s *Volumes) Remove(ctx context.Context, name string, force bool) error {
	if _, err := s.readVolume(name); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	if !force {
		if user, err := s.inUse(ctx, name); err != nil {
			return err
		} else if user != "" {
			return fmt.Errorf("remove volume %s: volume is in use by container %s: %w", name, user, errdefs.ErrConflict)
		}
	}
	data := filepath.Join(s.volumeDir(name), "_data")
	_ = syscall.Unmount(data, syscall.MNT_DETACH) // a tmpfs or device volume
	if err := os.RemoveAll(s.volumeDir(name)); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}
