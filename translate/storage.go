package translate

import (
	"fmt"
	"path"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/spec"
)

func (t *translator) volumes(s types.ServiceConfig) ([]spec.Mount, []spec.VolumeMount, []spec.Tmpfs) {
	var mounts []spec.Mount
	var vols []spec.VolumeMount
	var tmpfs []spec.Tmpfs
	for i, v := range s.Volumes {
		at := fmt.Sprintf("volumes[%d]", i)
		switch v.Type {
		case types.VolumeTypeBind:
			m := spec.Mount{Source: v.Source, Target: v.Target, ReadOnly: v.ReadOnly}
			if v.Bind != nil {
				m.CreateHostPath = bool(v.Bind.CreateHostPath)
				m.Propagation = v.Bind.Propagation
				if v.Bind.SELinux != "" {
					t.warn(s.Name, at+".bind.selinux", "SELinux relabeling is not supported; ignored")
				}
				if v.Bind.Recursive != "" {
					t.warn(s.Name, at+".bind.recursive", "recursive bind options are not supported; ignored")
				}
			}
			mounts = append(mounts, m)
		case types.VolumeTypeVolume:
			vm := spec.VolumeMount{Source: v.Source, Target: v.Target, ReadOnly: v.ReadOnly}
			if v.Volume != nil {
				vm.NoCopy = v.Volume.NoCopy
				vm.Subpath = v.Volume.Subpath
				if len(v.Volume.Labels) > 0 {
					t.warn(s.Name, at+".volume.labels", "labels on a service's volume mount are not supported; label the volume itself")
				}
			}
			vols = append(vols, vm)
		case types.VolumeTypeTmpfs:
			tm := spec.Tmpfs{Target: v.Target}
			if v.Tmpfs != nil {
				tm.Size = spec.Bytes(v.Tmpfs.Size)
				tm.Mode = spec.FileMode(v.Tmpfs.Mode)
			}
			tmpfs = append(tmpfs, tm)
		default:
			t.warn(s.Name, at, "volume type %q is not supported; ignored", v.Type)
		}
	}
	return mounts, vols, tmpfs
}

// tmpfs parses the service-level tmpfs list ("/run" or
// "/run:size=64m,mode=1777").
func (t *translator) tmpfs(s types.ServiceConfig) []spec.Tmpfs {
	var out []spec.Tmpfs
	for i, entry := range s.Tmpfs {
		target, opts, _ := strings.Cut(entry, ":")
		tm := spec.Tmpfs{Target: target}
		for _, o := range strings.Split(opts, ",") {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "":
			case "size":
				if b, err := spec.ParseBytes(v); err == nil {
					tm.Size = b
					continue
				}
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "size %q is not a size; ignored", v)
			case "mode":
				if m, err := spec.ParseFileMode(v); err == nil {
					tm.Mode = m
					continue
				}
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "mode %q is not an octal mode; ignored", v)
			case "rw":
			default:
				t.warn(s.Name, fmt.Sprintf("tmpfs[%d]", i), "option %q is not supported; ignored", o)
			}
		}
		out = append(out, tm)
	}
	return out
}

func secretRefs(refs []types.ServiceSecretConfig) []types.FileReferenceConfig {
	out := make([]types.FileReferenceConfig, len(refs))
	for i, r := range refs {
		out[i] = types.FileReferenceConfig(r)
	}
	return out
}

func configRefs(refs []types.ServiceConfigObjConfig) []types.FileReferenceConfig {
	out := make([]types.FileReferenceConfig, len(refs))
	for i, r := range refs {
		out[i] = types.FileReferenceConfig(r)
	}
	return out
}

// fileMounts resolves secret or config references against the project's
// top-level definitions. Targets default to dir+name; relative targets are
// placed under dir.
func (t *translator) fileMounts(service, kind string, refs []types.FileReferenceConfig, dir string) []spec.FileMount {
	var out []spec.FileMount
	for i, r := range refs {
		at := fmt.Sprintf("%s[%d]", kind, i)
		var def types.FileObjectConfig
		if kind == "secrets" {
			def = types.FileObjectConfig(t.project.Secrets[r.Source])
		} else {
			def = types.FileObjectConfig(t.project.Configs[r.Source])
		}
		fm := spec.FileMount{Name: r.Source, UID: r.UID, GID: r.GID}
		switch {
		case bool(def.External):
			t.warn(service, at, "external %s %q (a swarm object) is not supported; ignored", strings.TrimSuffix(kind, "s"), r.Source)
			continue
		case def.Environment != "":
			fm.Environment = def.Environment
			value := def.Content
			fm.Value = &value
		case def.File != "":
			fm.File = def.File
		default:
			fm.Content = def.Content
		}
		if def.Driver != "" || def.TemplateDriver != "" {
			t.warn(service, at, "%s drivers are not supported; ignored", kind)
		}
		switch {
		case r.Target == "":
			fm.Target = dir + r.Source
		case path.IsAbs(r.Target):
			fm.Target = r.Target
		default:
			fm.Target = dir + r.Target
		}
		if r.Mode != nil {
			m := spec.FileMode(*r.Mode)
			fm.Mode = &m
		}
		out = append(out, fm)
	}
	return out
}
