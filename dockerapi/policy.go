package dockerapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/hostpolicy"
	"github.com/cornus-dev/cornus/spec"
)

// volumeUse is a named volume a create request mounts: what the policy
// checks (an existing volume's options as created, else the request's) and
// whether it must be created.
type volumeUse struct {
	vol    spec.Volume
	exists bool
}

// volumesFor resolves the named volumes a request mounts against those the
// runtime has.
func (s *Server) volumesFor(ctx context.Context, vols map[string]spec.Volume) (map[string]volumeUse, error) {
	if len(vols) == 0 {
		return nil, nil
	}
	have, err := s.b.ListVolumes(ctx, backends.ListOptions{})
	if err != nil {
		return nil, err
	}
	existing := map[string]backends.Volume{}
	for _, v := range have {
		existing[v.Name] = v
	}
	out := map[string]volumeUse{}
	for name, v := range vols {
		if e, ok := existing[name]; ok {
			out[name] = volumeUse{vol: spec.Volume{Name: name, Driver: e.Driver, DriverOpts: maps.Clone(e.Options)}, exists: true}
			continue
		}
		out[name] = volumeUse{vol: v}
	}
	return out, nil
}

// checkCreate applies the host policy to a container about to be created,
// naming Engine API fields.
func (s *Server) checkCreate(name string, a spec.App, uses map[string]volumeUse) error {
	vols := map[string]spec.Volume{}
	for n, u := range uses {
		vols[n] = u.vol
	}
	return policyError("container "+name, s.policy.CheckApp("container", a, vols))
}

// policyError renames a refusal's spec paths to the Engine API fields a
// Docker client sent and says which container or volume it concerns.
func policyError(what string, err error) error {
	var d *hostpolicy.DeniedError
	if !errors.As(err, &d) {
		return err
	}
	return fmt.Errorf("%s: %w", what, d.Renamed(engineField))
}

// engineFields maps the spec fields the host policy names to HostConfig.
var engineFields = map[string]string{
	"privileged": "Privileged", "devices": "Devices", "deviceCgroupRules": "DeviceCgroupRules",
	"capAdd": "CapAdd", "networkMode": "NetworkMode", "pidMode": "PidMode", "ipcMode": "IpcMode",
	"utsMode": "UTSMode", "usernsMode": "UsernsMode", "cgroupnsMode": "CgroupnsMode",
	"securityOpt": "SecurityOpt", "sysctls": "Sysctls", "mounts": "Binds/Mounts", "volumes": "Mounts",
}

var (
	policyPath = regexp.MustCompile(`^(container|volume)\.([a-zA-Z]+)(.*)$`)
	bindSource = regexp.MustCompile(`^\[\d+\]\.source`) // Binds and Mounts number differently
)

// engineField turns "container.capAdd[0]" into "HostConfig.CapAdd[0]" and
// "container.volumes.data.driverOpts.device" into "volume
// data.driverOpts.device".
func engineField(path string) string {
	m := policyPath.FindStringSubmatch(path)
	if m == nil {
		return path
	}
	if m[1] == "volume" {
		return "DriverOpts" + m[3]
	}
	field, rest := m[2], m[3]
	if field == "volumes" && !strings.HasPrefix(rest, "[") {
		// a named volume the container mounts: volumes.NAME.driverOpts...
		return "volume " + strings.TrimPrefix(rest, ".")
	}
	if field == "mounts" {
		rest = bindSource.ReplaceAllString(rest, "")
	}
	if f, ok := engineFields[field]; ok {
		return "HostConfig." + f + rest
	}
	return path
}
