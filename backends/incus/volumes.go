package incus

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
)

// Volumes are Incus custom storage volumes on the default profile's
// pool, named by their runtime name (volumeName). Their labels and the
// local driver's options live in user.cornus.* keys; a volume whose
// options bind a host directory (type=none, o=bind, device=DIR) or name a
// host block device holds no data: containers mount that itself.
const (
	volKeyName      = "user.cornus.name"
	volKeyLabels    = "user.cornus.labels"
	volKeyOptions   = "user.cornus.driver-opts"
	volKeyAnonymous = "user.cornus.anonymous-for"
)

func (b *Backend) volumePath(pool, name string) string {
	return "/1.0/storage-pools/" + url.PathEscape(pool) + "/volumes/custom/" + url.PathEscape(name)
}

// EnsureVolume returns the volume named for (project, key), creating it
// if missing.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.RuntimeName()
	if vol, err := b.getVolume(ctx, name); err == nil {
		return vol, mountVolumeTmpfs(vol.Mountpoint, vol.Options)
	} else if !errdefs.IsNotFound(err) {
		return backends.Volume{}, err
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
	vol, err := b.createVolume(ctx, name, v.Volume.Driver, v.Volume.DriverOpts, labels, "")
	if errdefs.IsConflict(err) { // made meanwhile by another apply
		return b.getVolume(ctx, name)
	}
	return vol, err
}

func (b *Backend) createVolume(ctx context.Context, name, driver string, opts, labels map[string]string, anonymousFor string) (backends.Volume, error) {
	switch {
	case driver != "" && driver != "local":
		return backends.Volume{}, fmt.Errorf("volume %s: driver %q: only the local driver is supported by the incus backend: %w", name, driver, errdefs.ErrNotImplemented)
	case len(opts) > 0 && !hostMounted(opts) && hostpolicy.LocalDriverMount(opts).Kind != hostpolicy.MountTmpfs:
		return backends.Volume{}, fmt.Errorf("volume %s: driver options %v: the incus backend honors a bind of a host directory (type=none, o=bind, device=DIR), a host block device (type=FS, device=/dev/...) and a tmpfs (type=tmpfs) only; use Incus volumes for the rest: %w", name, opts, errdefs.ErrNotImplemented)
	}
	if _, _, _, err := tmpfsOptions(opts); err != nil {
		return backends.Volume{}, fmt.Errorf("volume %s: %w", name, err)
	}
	pool, err := b.storagePool(ctx)
	if err != nil {
		return backends.Volume{}, err
	}
	cfg := map[string]string{volKeyName: name}
	if len(labels) > 0 {
		data, _ := json.Marshal(labels)
		cfg[volKeyLabels] = string(data)
	}
	if len(opts) > 0 {
		data, _ := json.Marshal(opts)
		cfg[volKeyOptions] = string(data)
	}
	if anonymousFor != "" {
		cfg[volKeyAnonymous] = anonymousFor
	}
	body := storageVolume{Name: volumeName(name), Type: "custom", Config: cfg, ContentType: "filesystem"}
	if err := b.cli.call(ctx, request{method: "POST", path: "/1.0/storage-pools/" + url.PathEscape(pool) + "/volumes/custom", body: body}, nil); err != nil {
		return backends.Volume{}, fmt.Errorf("create volume %s: %w", name, err)
	}
	vol, err := b.getVolume(ctx, name)
	if err == nil {
		err = mountVolumeTmpfs(vol.Mountpoint, opts)
	}
	if err != nil {
		_ = b.cli.call(context.WithoutCancel(ctx), request{method: "DELETE", path: b.volumePath(pool, volumeName(name))}, nil)
		return backends.Volume{}, fmt.Errorf("create volume %s: %w", name, err)
	}
	return vol, nil
}

// hostMount reads a volume's local-driver options as the host policy
// checked them (hostpolicy.LocalDriverMount): a bind of a host directory
// (Incus binds it, whatever the flags), or a host block device's
// filesystem (type=FS, device=/dev/...), which Incus mounts on the host and
// passes in as a disk device. Anything else has no Incus form here: a
// tmpfs never mounts the device it names.
func hostMount(o map[string]string) (hostpolicy.LocalMount, bool) {
	m := hostpolicy.LocalDriverMount(o)
	switch m.Kind {
	case hostpolicy.MountBind:
		return m, m.Device != ""
	case hostpolicy.MountDevice:
		return m, m.Type != "" && strings.HasPrefix(m.Device, "/dev/")
	}
	return m, false
}

// hostMounted reports options hostMount has a form for.
func hostMounted(o map[string]string) bool { _, ok := hostMount(o); return ok }

// hostDisk fills d for a volume whose driver options name a host
// directory or block device; false for an Incus volume.
func hostDisk(d *diskPlan, o map[string]string) bool {
	m, ok := hostMount(o)
	switch {
	case !ok:
		return false
	case m.Kind == hostpolicy.MountBind:
		d.Source = m.Device
	default:
		d.Source, d.Block, d.MountOptions = m.Device, true, m.Options
	}
	return true
}

func (b *Backend) getVolume(ctx context.Context, name string) (backends.Volume, error) {
	pool, err := b.storagePool(ctx)
	if err != nil {
		return backends.Volume{}, err
	}
	v, err := b.readVolume(ctx, pool, name)
	if err != nil {
		return backends.Volume{}, err
	}
	return volumeOf(pool, b.cfg.project, v), nil
}

// readVolume is Incus's record of volume name on pool, its users
// included (which a backends.Volume does not carry).
func (b *Backend) readVolume(ctx context.Context, pool, name string) (storageVolume, error) {
	var v storageVolume
	if err := b.cli.call(ctx, request{method: "GET", path: b.volumePath(pool, volumeName(name))}, &v); err != nil {
		return v, fmt.Errorf("volume %s: %w", name, err)
	}
	return v, nil
}

// volumeOf is v as the backend reports it; its mountpoint is where a dir
// pool keeps it on incusd's host (custom/<incus project>_<volume>).
func volumeOf(pool, project string, v storageVolume) backends.Volume {
	out := backends.Volume{Name: cmpOr(v.Config[volKeyName], v.Name), Driver: "local", Created: v.CreatedAt,
		Mountpoint: "/var/lib/incus/storage-pools/" + pool + "/custom/" + project + "_" + v.Name}
	_ = json.Unmarshal([]byte(v.Config[volKeyLabels]), &out.Labels)
	_ = json.Unmarshal([]byte(v.Config[volKeyOptions]), &out.Options)
	if m, ok := hostMount(out.Options); ok {
		out.Mountpoint = m.Device
	}
	return out
}

// ListVolumes lists the custom volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	pool, err := b.storagePool(ctx)
	if err != nil {
		return nil, err
	}
	var vs []storageVolume
	if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/storage-pools/" + url.PathEscape(pool) + "/volumes/custom", query: url.Values{"recursion": {"1"}}}, &vs); err != nil {
		return nil, fmt.Errorf("list volumes: %w", err)
	}
	var out []backends.Volume
	for _, v := range vs {
		vol := volumeOf(pool, b.cfg.project, v)
		if backends.MatchLabels(vol.Labels, o.Labels) {
			out = append(out, vol)
		}
	}
	return out, nil
}

// RemoveVolume removes a volume no container uses (force: Incus refuses
// anyway while one mounts it, so force removes nothing more). A tmpfs
// volume's tmpfs is unmounted first, once no instance uses it.
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	pool, err := b.storagePool(ctx)
	if err != nil {
		return err
	}
	if v, err := b.readVolume(ctx, pool, name); err == nil {
		vol := volumeOf(pool, b.cfg.project, v)
		if _, _, tmpfs, _ := tmpfsOptions(vol.Options); tmpfs && len(v.UsedBy) > 0 {
			return fmt.Errorf("remove volume %s: volume is in use by %s: %w", name, strings.Join(v.UsedBy, ", "), errdefs.ErrConflict)
		}
		if err := unmountVolumeTmpfs(vol.Mountpoint, vol.Options); err != nil {
			return fmt.Errorf("remove volume %s: %w", name, err)
		}
	}
	if err := b.cli.call(ctx, request{method: "DELETE", path: b.volumePath(pool, volumeName(name))}, nil); err != nil {
		if strings.Contains(err.Error(), "in use") || strings.Contains(err.Error(), "used by") {
			return fmt.Errorf("remove volume %s: volume is in use: %v: %w", name, err, errdefs.ErrConflict)
		}
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	return nil
}

// placeStorage plans the container's volumes, binds and their subpaths:
// named volumes (made when missing, as Docker does), anonymous volumes
// (made for this container), host directories; a subpath mounts the
// volume out of sight and binds the subdirectory where it belongs.
func (b *Backend) placeStorage(ctx context.Context, cs backends.ContainerSpec, p *plan, proc *procConfig, undo *undoList) error {
	for i, v := range cs.Volumes {
		d := diskPlan{Path: v.Target, ReadOnly: v.ReadOnly}
		switch {
		case v.Name == "" && hostDisk(&d, v.DriverOpts):
		case v.Name == "":
			anon := "cornus-anon-" + randomSuffix() + randomSuffix()
			if _, err := b.createVolume(ctx, anon, v.Driver, v.DriverOpts, nil, p.Name); err != nil {
				return fmt.Errorf("volumes[%d]: %w", i, err)
			}
			undo.add(func() { _ = b.RemoveVolume(context.WithoutCancel(ctx), anon, true) })
			p.Anonymous = append(p.Anonymous, anon)
			d.Volume = volumeName(anon)
		default:
			vol, err := b.getVolume(ctx, v.Name)
			if errdefs.IsNotFound(err) {
				vol, err = b.createVolume(ctx, v.Name, "", nil, nil, "")
				if errdefs.IsConflict(err) {
					vol, err = b.getVolume(ctx, v.Name)
				}
			}
			if err == nil {
				err = mountVolumeTmpfs(vol.Mountpoint, vol.Options)
			}
			if err != nil {
				return fmt.Errorf("volumes[%d]: %w", i, err)
			}
			if !hostDisk(&d, vol.Options) {
				d.Volume = volumeName(v.Name)
			}
			if v.Inherited {
				p.Anonymous = append(p.Anonymous, v.Name) // this container's now
			}
		}
		if v.Subpath != "" {
			hidden := fmt.Sprintf("%s/volumes/%d", ctrBase, i)
			proc.Binds = append(proc.Binds, bindMount{Source: hidden + "/" + strings.TrimPrefix(v.Subpath, "/"), Target: v.Target, ReadOnly: v.ReadOnly})
			d.Path = hidden
		}
		p.Disks = append(p.Disks, d)
	}
	for i, m := range cs.Binds {
		if m.CreateHostPath {
			if err := backends.MakeBindSource(m.Source); err != nil {
				return fmt.Errorf("mounts[%d]: %w", i, err)
			}
		}
		p.Disks = append(p.Disks, diskPlan{Source: m.Source, Path: m.Target, ReadOnly: m.ReadOnly, Unshifted: unshiftable(m.Source)})
	}
	return nil
}

// storagePool is the pool of the default profile's root disk, where
// volumes go.
func (b *Backend) storagePool(ctx context.Context) (string, error) {
	b.poolOnce.Do(func() {
		var p profile
		if err := b.cli.call(ctx, request{method: "GET", path: "/1.0/profiles/default"}, &p); err != nil {
			b.poolErr = fmt.Errorf("incus: default profile: %w", err)
			return
		}
		for _, d := range p.Devices {
			if d["type"] == "disk" && d["path"] == "/" && d["pool"] != "" {
				b.pool = d["pool"]
				return
			}
		}
		b.poolErr = fmt.Errorf("incus: the default profile has no root disk on a storage pool (scripts/incus.sh sets one up): %w", errdefs.ErrFailedPrecondition)
	})
	return b.pool, b.poolErr
}
