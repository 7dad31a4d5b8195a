package containerd

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

// Volumes are directories: <data>/volumes/<name>/_data, with the
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

func (b *Backend) volumeDir(name string) string { return filepath.Join(b.cfg.volumesDir(), name) }

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

// EnsureVolume returns the volume labelled for (project, key) or named so,
// creating it if missing.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.Volume.Name
	if name == "" {
		name = v.Project + "_" + v.Key
	}
	if err := validName(name); err != nil {
		return backends.Volume{}, err
	}
	if m, err := b.readVolume(name); err == nil {
		return m.volume(b.volumeDir(name)), nil
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
	return b.createVolume(name, v.Volume.Driver, v.Volume.DriverOpts, labels)
}

func (b *Backend) createVolume(name, driver string, opts, labels map[string]string) (backends.Volume, error) {
	switch {
	case driver != "" && driver != "local":
		return backends.Volume{}, fmt.Errorf("volume %s: driver %q: only the local driver is supported by the containerd backend: %w", name, driver, errdefs.ErrNotImplemented)
	case len(opts) > 0 && !isBind(opts) && opts["type"] != "tmpfs" && (opts["type"] == "" || opts["device"] == ""):
		return backends.Volume{}, fmt.Errorf("volume %s: driver options %v: the local driver needs type and device (or o=bind, or type=tmpfs): %w", name, opts, errdefs.ErrInvalidArgument)
	}
	dir := b.volumeDir(name)
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

// anonymousVolume creates a volume for one container, removed with it
// when asked (rm -v).
func (b *Backend) anonymousVolume(containerID string, driver string, opts map[string]string) (backends.Volume, error) {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return b.createVolume(hex.EncodeToString(buf), driver, opts, map[string]string{labelAnonymousFor: containerID})
}

const labelAnonymousFor = "cornus.anonymous-for"

// mountDevice mounts a device volume on first use (the local driver's
// type+device options); a volume mounted already is left as it is.
func (b *Backend) mountDevice(v backends.Volume) error {
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

func (b *Backend) readVolume(name string) (volumeMeta, error) {
	var m volumeMeta
	data, err := os.ReadFile(filepath.Join(b.volumeDir(name), "volume.json"))
	if os.IsNotExist(err) {
		return m, fmt.Errorf("volume %s: %w", name, errdefs.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("volume %s: %w", name, err)
	}
	return m, json.Unmarshal(data, &m)
}

func (m volumeMeta) volume(dir string) backends.Volume {
	return backends.Volume{Name: m.Name, Driver: m.Driver, Mountpoint: m.mountpoint(dir), Labels: m.Labels, Options: m.Options, Created: m.Created}
}

// ListVolumes lists volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	entries, err := os.ReadDir(b.cfg.volumesDir())
	if err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	var out []backends.Volume
	for _, e := range entries {
		m, err := b.readVolume(e.Name())
		if err != nil || !matchLabels(m.Labels, o.Labels) {
			continue
		}
		out = append(out, m.volume(b.volumeDir(e.Name())))
	}
	return out, nil
}

// RemoveVolume removes a volume no container uses (force: even then).
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	if _, err := b.readVolume(name); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	if !force {
		if user, err := b.volumeUser(ctx, name); err != nil {
			return err
		} else if user != "" {
			return fmt.Errorf("remove volume %s: volume is in use by container %s: %w", name, user, errdefs.ErrConflict)
		}
	}
	data := filepath.Join(b.volumeDir(name), "_data")
	_ = syscall.Unmount(data, syscall.MNT_DETACH) // a tmpfs or device volume
	if err := os.RemoveAll(b.volumeDir(name)); err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}

// volumeUser names a container that mounts the volume, or "".
func (b *Backend) volumeUser(ctx context.Context, name string) (string, error) {
	all, err := b.storedAll(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range all {
		for _, m := range s.Mounts {
			if m.Type == "volume" && m.Name == name {
				return s.Name, nil
			}
		}
	}
	return "", nil
}

// matchLabels: every filter label must match; a value of "" only requires
// the key.
func matchLabels(have, want map[string]string) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}

// validName is Docker's rule for names of volumes and containers: they
// become path elements here.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > 255 {
		return fmt.Errorf("%q is not a valid name: %w", name, errdefs.ErrInvalidArgument)
	}
	return nil
}
