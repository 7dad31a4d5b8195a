package createbody

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/cornus-dev/cornus/spec"
)

// storage collects what a request mounts: the app's mounts, the named
// volumes it uses (vols) and the targets taken, so that the image's
// anonymous volumes are not mounted twice.
type storage struct {
	a       *spec.App
	vols    map[string]spec.Volume
	targets map[string]bool
}

// readStorage turns Binds, Mounts, Tmpfs and anonymous Config.Volumes into
// spec mounts, volumes and tmpfs; named volumes are recorded in vols.
func readStorage(a *spec.App, cfg *container.Config, hc *container.HostConfig, vols map[string]spec.Volume) error {
	s := storage{a: a, vols: vols, targets: map[string]bool{}}
	for _, b := range hc.Binds {
		if err := s.bind(b); err != nil {
			return err
		}
	}
	for _, m := range hc.Mounts {
		if err := s.mount(m); err != nil {
			return err
		}
	}
	for _, target := range slices.Sorted(maps.Keys(hc.Tmpfs)) {
		s.tmpfs(target, hc.Tmpfs[target])
	}
	// Config.Volumes declares anonymous volumes (e.g. from the image);
	// those already mounted otherwise are not repeated.
	for _, target := range slices.Sorted(maps.Keys(cfg.Volumes)) {
		if !s.targets[path.Clean(target)] {
			a.Volumes = append(a.Volumes, spec.VolumeMount{Target: target})
		}
	}
	return nil
}

func (s storage) named(name string) {
	if _, ok := s.vols[name]; !ok {
		s.vols[name] = spec.Volume{Name: name}
	}
}

// bind reads one Binds entry, SRC:DST[:OPTS]; an absolute SRC is a host
// path, any other a named volume.
func (s storage) bind(b string) error {
	parts := strings.Split(b, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return invalid("invalid volume specification: '%s'", b)
	}
	src, dst := parts[0], parts[1]
	opts := ""
	if len(parts) == 3 {
		opts = parts[2]
	}
	ro, propagation, noCopy := false, "", false
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "ro":
			ro = true
		case "rw", "", "z", "Z", "consistent", "cached", "delegated":
		case "nocopy":
			noCopy = true
		case "private", "rprivate", "shared", "rshared", "slave", "rslave":
			propagation = o
		default:
			return invalid("invalid mode: %s", o)
		}
	}
	s.targets[path.Clean(dst)] = true
	if path.IsAbs(src) {
		s.a.Mounts = append(s.a.Mounts, spec.Mount{Source: src, Target: dst, ReadOnly: ro, CreateHostPath: true, Propagation: propagation})
		return nil
	}
	s.named(src)
	s.a.Volumes = append(s.a.Volumes, spec.VolumeMount{Source: src, Target: dst, ReadOnly: ro, NoCopy: noCopy})
	return nil
}

// mount reads one HostConfig.Mounts entry.
func (s storage) mount(m mount.Mount) error {
	s.targets[path.Clean(m.Target)] = true
	switch m.Type {
	case mount.TypeBind:
		sm := spec.Mount{Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
		if m.BindOptions != nil {
			sm.Propagation = string(m.BindOptions.Propagation)
			sm.CreateHostPath = m.BindOptions.CreateMountpoint
		}
		s.a.Mounts = append(s.a.Mounts, sm)
	case mount.TypeVolume, "":
		s.volume(m)
	case mount.TypeTmpfs:
		t := spec.Tmpfs{Target: m.Target}
		if o := m.TmpfsOptions; o != nil {
			t.Size, t.Mode = spec.Bytes(o.SizeBytes), spec.FileMode(o.Mode)
		}
		s.a.Tmpfs = append(s.a.Tmpfs, t)
	default:
		return invalid("mount type %q is not supported by cornus", m.Type)
	}
	return nil
}

func (s storage) volume(m mount.Mount) {
	vm := spec.VolumeMount{Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly}
	if o := m.VolumeOptions; o != nil {
		vm.NoCopy, vm.Subpath = o.NoCopy, o.Subpath
		// Driver options create the volume if it does not exist yet,
		// anonymous or named, as dockerd does.
		if dc := o.DriverConfig; dc != nil && m.Source == "" {
			vm.Driver, vm.DriverOpts = dc.Name, maps.Clone(dc.Options)
		} else if dc != nil && m.Source != "" {
			s.vols[m.Source] = spec.Volume{Name: m.Source, Driver: dc.Name, DriverOpts: maps.Clone(dc.Options)}
		}
	}
	if m.Source != "" {
		s.named(m.Source)
	}
	s.a.Volumes = append(s.a.Volumes, vm)
}

// tmpfs reads one HostConfig.Tmpfs entry, TARGET: size=…,mode=….
func (s storage) tmpfs(target, opts string) {
	t := spec.Tmpfs{Target: target}
	for _, o := range strings.Split(opts, ",") {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "size":
			if b, err := spec.ParseBytes(v); err == nil {
				t.Size = b
			}
		case "mode":
			if m, err := spec.ParseFileMode(v); err == nil {
				t.Mode = m
			}
		}
	}
	s.targets[path.Clean(target)] = true
	s.a.Tmpfs = append(s.a.Tmpfs, t)
}
