package podman

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// propagations are the bind propagation modes.
var propagations = []string{"private", "rprivate", "shared", "rshared", "slave", "rslave"}

func mapStorage(cs backends.ContainerSpec, o buildOptions, s *specGenerator) error {
	for i, m := range cs.Binds {
		if m.Source == "" || m.Target == "" {
			return invalid("mounts[%d]: source and target are required", i)
		}
		opts := []string{"rbind"}
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		if m.Propagation != "" {
			if !slices.Contains(propagations, m.Propagation) {
				return invalid("mounts[%d].propagation: %q is not one of %v", i, m.Propagation, propagations)
			}
			opts = append(opts, m.Propagation)
		}
		s.Mounts = append(s.Mounts, ociMount{Destination: m.Target, Type: "bind", Source: m.Source, Options: opts})
	}
	for i, v := range cs.Volumes {
		if v.Target == "" {
			return invalid("volumes[%d].target: required", i)
		}
		var opts []string
		if v.ReadOnly {
			opts = append(opts, "ro")
		}
		if v.Subpath != "" {
			dir, ok := o.Mountpoints[i]
			clean := path.Clean("/" + v.Subpath)
			if !ok || dir == "" {
				return invalid("volumes[%d].subpath: the volume's directory is unknown", i)
			}
			if strings.Contains(v.Subpath, "..") || clean == "/" {
				return invalid("volumes[%d].subpath: %q must be a path inside the volume", i, v.Subpath)
			}
			s.Mounts = append(s.Mounts, ociMount{Destination: v.Target, Type: "bind", Source: path.Join(dir, clean), Options: append([]string{"rbind"}, opts...)})
			continue
		}
		if v.NoCopy {
			opts = append(opts, "nocopy")
		}
		name := v.Name
		if n, ok := o.VolumeNames[i]; ok {
			name = n
		}
		s.Volumes = append(s.Volumes, namedVolume{Name: name, Dest: v.Target, Options: opts})
	}
	for i, t := range cs.Tmpfs {
		if t.Target == "" {
			return invalid("tmpfs[%d].target: required", i)
		}
		var opts []string
		if t.Size > 0 {
			opts = append(opts, "size="+strconv.FormatInt(t.Size, 10))
		}
		if t.Mode != 0 {
			opts = append(opts, fmt.Sprintf("mode=%o", t.Mode&0o7777))
		}
		s.Mounts = append(s.Mounts, ociMount{Destination: t.Target, Type: "tmpfs", Source: "tmpfs", Options: opts})
	}
	if cs.ShmSize > 0 {
		n := cs.ShmSize
		s.ShmSize = &n
	}
	for _, d := range cs.Devices {
		dev := d.Source
		if d.Target != "" || d.Permissions != "" {
			dev += ":" + cmp.Or(d.Target, d.Source)
		}
		if d.Permissions != "" {
			dev += ":" + d.Permissions
		}
		s.Devices = append(s.Devices, linuxDevice{Path: dev})
	}
	for i, r := range cs.DeviceCgroupRules {
		rule, err := deviceRuleOf(r)
		if err != nil {
			return invalid("deviceCgroupRules[%d]: %v", i, err)
		}
		s.DeviceCg = append(s.DeviceCg, rule)
	}
	return nil
}

// deviceRuleOf reads a device cgroup rule: "TYPE MAJOR:MINOR ACCESS", with
// * for any number.
func deviceRuleOf(r string) (deviceRule, error) {
	f := strings.Fields(r)
	if len(f) != 3 || !slices.Contains([]string{"a", "b", "c"}, f[0]) {
		return deviceRule{}, fmt.Errorf("%q is not 'TYPE MAJOR:MINOR ACCESS' (TYPE a, b or c)", r)
	}
	maj, mnr, ok := strings.Cut(f[1], ":")
	if !ok {
		return deviceRule{}, fmt.Errorf("%q: want MAJOR:MINOR", r)
	}
	num := func(s string) (*int64, error) {
		if s == "*" {
			return nil, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: %q is not a device number or *", r, s)
		}
		return &n, nil
	}
	rule := deviceRule{Allow: true, Type: f[0], Access: f[2]}
	var err error
	if rule.Major, err = num(maj); err != nil {
		return rule, err
	}
	if rule.Minor, err = num(mnr); err != nil {
		return rule, err
	}
	if strings.Trim(f[2], "rwm") != "" {
		return rule, fmt.Errorf("%q: access %q is not a combination of r, w and m", r, f[2])
	}
	return rule, nil
}
