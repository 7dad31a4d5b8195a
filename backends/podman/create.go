package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/filecopy"
)

// labelAnonymousVolumes lists the volumes Create made for a container's
// anonymous volumes with a driver or driver options (podman creates only
// plain anonymous volumes): Remove with Volumes deletes them.
const labelAnonymousVolumes = "cornus.podman.anonymous-volumes"

// Create makes the container (not started): prepare what the spec needs
// (image entrypoint, host ports from ranges, volumes), create it, copy
// secrets and configs in. On any failure nothing is left: the container
// and what was prepared for it are removed again.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	o, err := b.prepare(ctx, &cs)
	var id string
	if err == nil {
		id, err = b.createContainer(ctx, cs, o)
	}
	if err != nil {
		b.dropVolumes(ctx, o.VolumeNames)
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	c, err := b.finishCreate(ctx, id, cs)
	if err != nil {
		// Removed even when ctx is done; its prepared volumes go with it.
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = errors.Join(err, b.Remove(rmCtx, id, backends.RemoveOptions{Force: true, Volumes: true}))
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	return c, nil
}

// createContainer sends the create request and returns the new ID.
func (b *Backend) createContainer(ctx context.Context, cs backends.ContainerSpec, o buildOptions) (string, error) {
	sg, err := buildSpec(cs, o)
	if err != nil {
		return "", err
	}
	var res createResponse
	err = b.cli.call(ctx, request{method: "POST", path: "/containers/create", body: sg}, &res)
	if err != nil && b.freeStorageName(ctx, cs.Name, err) {
		err = b.cli.call(ctx, request{method: "POST", path: "/containers/create", body: sg}, &res)
	}
	if err != nil {
		return "", explainCreate(cs, o, err)
	}
	return res.ID, nil
}

// freeStorageName frees a name that only podman's storage holds: what a
// create leaves when the service dies half-way (the storage container is
// made, podman's own record of it is not). Podman's remove takes such a
// container out of storage, as `podman rm` does; a container podman knows
// by that name is a Conflict for the caller, never removed. It reports
// whether the name was freed.
func (b *Backend) freeStorageName(ctx context.Context, name string, createErr error) bool {
	if !errdefs.IsConflict(createErr) || !strings.Contains(createErr.Error(), "creating container storage") {
		return false
	}
	if _, err := b.inspect(ctx, name); !errdefs.IsNotFound(err) {
		return false
	}
	q := url.Values{"force": {"true"}}
	err := b.cli.call(ctx, request{method: "DELETE", path: containerPath(name, ""), query: q}, nil)
	return err == nil || errdefs.IsNotFound(err)
}

// explainCreate adds what the spec asked for to podman's terse refusals.
func explainCreate(cs backends.ContainerSpec, o buildOptions, err error) error {
	if errdefs.IsConflict(err) && strings.Contains(err.Error(), "already in use") {
		return fmt.Errorf("the name %s is taken by a container cornus did not make for this project; remove it (podman rm %s) or use another project name: %w",
			cs.Name, cs.Name, err)
	}
	if !errdefs.IsNotFound(err) {
		return err
	}
	for i, dir := range o.Mountpoints {
		if strings.Contains(err.Error(), dir) {
			v := cs.Volumes[i]
			return fmt.Errorf("volumes[%d].subpath: %q does not exist in volume %s: %w", i, v.Subpath, v.Name, err)
		}
	}
	if strings.Contains(err.Error(), "image") {
		return fmt.Errorf("image %s is not in podman's store (load it with `cornus image load`, or pull it): %w", cs.Image, err)
	}
	return err
}

func (b *Backend) finishCreate(ctx context.Context, id string, cs backends.ContainerSpec) (backends.Container, error) {
	if len(cs.Files) > 0 {
		if err := filecopy.Copy(ctx, b, id, cs.Files); err != nil {
			return backends.Container{}, err
		}
	}
	d, err := b.Inspect(ctx, id)
	if err != nil {
		return backends.Container{}, err
	}
	return d.Container, nil
}

// prepare does the I/O the mapping needs. It may record volumes it created
// in the result even when it fails, for the caller to drop.
func (b *Backend) prepare(ctx context.Context, cs *backends.ContainerSpec) (buildOptions, error) {
	var o buildOptions
	needEntrypoint := cs.Command != nil && len(cs.Command) == 0 && cs.Entrypoint == nil
	needHealth := cs.Healthcheck == nil || !cs.Healthcheck.Disabled && len(cs.Healthcheck.Test) == 0
	if needEntrypoint || needHealth {
		img, err := b.inspectImage(ctx, cs.Image)
		switch {
		case err == nil:
			o.ImageEntrypoint, o.ImageHealthcheck = img.Config.Entrypoint, img.HealthCheck
		case needEntrypoint || !errdefs.IsNotFound(err):
			return o, err
		} // a missing image is the create call's to report
	}
	for i, p := range cs.Ports {
		if p.HostPortEnd > p.HostPort && p.HostPort > 0 {
			if o.HostPorts == nil {
				o.HostPorts = map[int]int{}
			}
			o.HostPorts[i] = b.pickHostPort(p)
		}
	}
	if len(cs.Ulimits) > 0 {
		d, err := b.defaultUlimits(ctx, cs.Image)
		if err != nil {
			return o, fmt.Errorf("ulimits: %w", err)
		}
		o.DefaultUlimits = d
	}
	if err := b.createHostPaths(cs.Binds); err != nil {
		return o, err
	}
	for i, v := range cs.Volumes {
		switch {
		case v.Subpath != "" && v.Name == "":
			return o, invalid("volumes[%d].subpath: an anonymous volume has no subpath to mount", i)
		case v.Subpath != "":
			vol, err := b.ensureNamedVolume(ctx, v.Name)
			if err != nil {
				return o, fmt.Errorf("volumes[%d]: %w", i, err)
			}
			if o.Mountpoints == nil {
				o.Mountpoints = map[int]string{}
			}
			o.Mountpoints[i] = vol.Mountpoint
		case v.Name == "" && (v.Driver != "" || len(v.DriverOpts) > 0):
			name, err := b.createAnonymousVolume(ctx, cs.Name, v)
			if err != nil {
				return o, fmt.Errorf("volumes[%d]: %w", i, err)
			}
			if o.VolumeNames == nil {
				o.VolumeNames = map[int]string{}
			}
			o.VolumeNames[i] = name
		}
	}
	// Inherited volumes are this container's to remove as well: one
	// podman made anonymous is removed by podman, one Create made by it.
	names := backends.InheritedNames(*cs)
	for _, n := range o.VolumeNames {
		names = append(names, n)
	}
	if len(names) > 0 {
		cs.Labels = maps.Clone(cs.Labels)
		if cs.Labels == nil {
			cs.Labels = map[string]string{}
		}
		cs.Labels[labelAnonymousVolumes] = strings.Join(names, ",")
	}
	return o, nil
}

// pickHostPort chooses the first free port of a range. Podman takes one
// host port per mapping; the choice is made on this host, which is the
// service's only for a unix socket (elsewhere the range's first port).
func (b *Backend) pickHostPort(p backends.PortMapping) int {
	if b.cli.ep().network != "unix" {
		return p.HostPort
	}
	host := p.HostIP
	if host == "" {
		host = "0.0.0.0"
	}
	for port := p.HostPort; port <= p.HostPortEnd; port++ {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		var err error
		if p.Protocol == "udp" {
			var c net.PacketConn
			if c, err = net.ListenPacket("udp", addr); err == nil {
				c.Close()
			}
		} else {
			var l net.Listener
			if l, err = net.Listen("tcp", addr); err == nil {
				l.Close()
			}
		}
		if err == nil {
			return port
		}
	}
	return p.HostPort // all taken: podman's error names the port
}

// createHostPaths makes missing bind sources marked createHostPath, as
// Docker does (podman refuses a missing source). Only a local service
// (unix socket) shares this host's paths.
func (b *Backend) createHostPaths(binds []backends.Bind) error {
	if b.cli.ep().network != "unix" {
		return nil
	}
	for i, m := range binds {
		if !m.CreateHostPath {
			continue
		}
		if _, err := os.Stat(m.Source); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(m.Source, 0o755); err != nil {
				return fmt.Errorf("mounts[%d].createHostPath: %w", i, err)
			}
		}
	}
	return nil
}

// createAnonymousVolume creates the volume an anonymous mount with a driver
// or driver options stands for, named after the container.
func (b *Backend) createAnonymousVolume(ctx context.Context, container string, v backends.VolumeMount) (string, error) {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	name := container + "-anon-" + hex.EncodeToString(suffix[:])
	body := volumeResource{Name: name, Driver: v.Driver, Options: maps.Clone(v.DriverOpts), Label: map[string]string{labelAnonymousVolumes: container}}
	if body.Driver == "" {
		body.Driver = "local"
	}
	if err := b.cli.call(ctx, request{method: "POST", path: "/volumes/create", body: body}, nil); err != nil {
		return "", fmt.Errorf("create volume %s: %w", name, err)
	}
	return name, nil
}

// dropVolumes removes volumes prepared for a container that was not made.
func (b *Backend) dropVolumes(ctx context.Context, names map[int]string) {
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, n := range names {
		_ = b.RemoveVolume(rmCtx, n, true)
	}
}

// defaultUlimits returns the ulimits the service gives a container that
// asks for none (containers.conf's default_ulimits, which the API does not
// report elsewhere): learned once, from a container created for the
// purpose with image and removed at once (never started).
func (b *Backend) defaultUlimits(ctx context.Context, image string) ([]backends.Ulimit, error) {
	b.ulimitsMu.Lock()
	defer b.ulimitsMu.Unlock()
	if b.ulimits != nil {
		return b.ulimits, nil
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	probe := specGenerator{
		Name: "cornus-ulimits-probe-" + hex.EncodeToString(suffix[:]), Image: image,
		Command: &[]string{"true"}, NetNS: &namespace{NSMode: "none"},
	}
	var res createResponse
	if err := b.cli.call(ctx, request{method: "POST", path: "/containers/create", body: probe}, &res); err != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", err)
	}
	d, err := b.inspect(ctx, res.ID)
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	rmErr := b.Remove(rmCtx, res.ID, backends.RemoveOptions{Force: true, Volumes: true})
	if err != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", err)
	}
	if rmErr != nil {
		return nil, fmt.Errorf("learn the service's default ulimits: %w", rmErr)
	}
	out := []backends.Ulimit{}
	for _, u := range d.HostConfig.Ulimits {
		name := strings.ToLower(strings.TrimPrefix(u.Name, "RLIMIT_"))
		out = append(out, backends.Ulimit{Name: name, Soft: int64(u.Soft), Hard: int64(u.Hard)})
	}
	b.ulimits = out
	return out, nil
}
