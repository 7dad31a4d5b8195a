package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	runcoptions "github.com/containerd/containerd/api/types/runc/options"
	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

// Labels cornus keeps on containerd containers besides the spec's.
const labelName = "cornus.name"

// defaultNetwork is where a container without networks goes (Docker's
// default bridge).
const defaultNetwork = "bridge"

// Create prepares everything a container needs — volumes, files, its
// network namespace attached to its networks, hosts and resolv.conf — and
// creates the containerd container and its monitor record. On any failure
// what was prepared is undone.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (_ backends.Container, err error) {
	ctx = b.ns(ctx)
	if err := validName(cs.Name); err != nil {
		return backends.Container{}, fmt.Errorf("create container: %w", err)
	}
	if other, err := b.byName(ctx, cs.Name); err == nil {
		return backends.Container{}, fmt.Errorf("create container %s: the name is already in use by container %s: %w", cs.Name, other, errdefs.ErrConflict)
	}
	imgName, err := normalize(cs.Image)
	if err != nil {
		return backends.Container{}, err
	}
	img, err := b.cli.GetImage(ctx, imgName)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: image %s: %w", cs.Name, cs.Image, err)
	}
	if err := b.unpack(ctx, img); err != nil {
		return backends.Container{}, err
	}
	imgSpec, err := img.Spec(ctx)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	cfgDesc, _ := img.Config(ctx)

	id := newID()
	dir := b.cfg.containerDir(id)
	release, err := b.lockCreating(id)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	defer release()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
			_ = os.RemoveAll(dir)
		}
	}()
	st := stored{ID: id, Name: cs.Name, Spec: cs, ImageID: cfgDesc.Digest.String(), Created: time.Now().UTC()}
	hostname := firstNonEmpty(cs.Hostname, id[:12])

	mounts, err := b.prepareMounts(cs, &st, &undo)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	fileMounts, err := writeFiles(dir, cs.Files)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	in := specInput{cs: cs, image: imgSpec.Config, hostname: hostname, mounts: append(mounts, fileMounts...), initBin: findInit()}
	if err := b.prepareNetwork(ctx, cs, &st, &in, &undo); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if in.pidNS, err = b.sharedNamespace(cs.PID, "pid"); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: pidMode: %w", cs.Name, err)
	}
	if in.ipcNS, err = b.sharedNamespace(cs.IPC, "ipc"); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: ipcMode: %w", cs.Name, err)
	}
	opts, err := specOpts(in)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	labels := map[string]string{labelName: cs.Name}
	for k, v := range cs.Labels {
		labels[k] = v
	}
	ctr, err := b.cli.NewContainer(ctx, id,
		client.WithImage(img), client.WithSnapshotter(b.cfg.snapshotter), client.WithNewSnapshot(id, img),
		client.WithRuntime(runtimeName, &runcoptions.Options{Root: b.cfg.runcRoot()}),
		client.WithNewSpec(opts...), client.WithContainerLabels(labels))
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	undo = append(undo, func() { _ = ctr.Delete(context.WithoutCancel(ctx), client.WithSnapshotCleanup) })
	if err := b.seedVolumes(ctx, id, cs, st.Mounts); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := b.writeStored(st); err != nil {
		return backends.Container{}, err
	}
	if err := b.records.Write(b.newRecord(st)); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	b.event("create", st)
	return b.view(st, b.recordOf(id)), nil
}

func newID() string {
	buf := make([]byte, 32)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)
}

// newRecord is the monitor record of a created container.
func (b *Backend) newRecord(st stored) monitor.Record {
	cs := st.Spec
	r := monitor.Record{
		Version: monitor.RecordVersion, ID: st.ID, Name: st.Name, Image: cs.Image, Labels: cs.Labels, Desired: monitor.DesiredStopped,
		State: monitor.State{Status: monitor.StatusCreated},
		Supervision: monitor.Supervision{
			Restart:     monitor.RestartPolicy{Name: firstNonEmpty(cs.Restart.Name, monitor.RestartNo), MaxRetries: cs.Restart.MaxRetries},
			StopGrace:   cs.StopTimeout,
			LogMaxBytes: b.cfg.logMaxBytes,
			OpenStdin:   cs.StdinOpen,
			StdinOnce:   cs.StdinOnce,
			TTY:         cs.TTY,
			Events:      b.cfg.eventsDir(),
		},
	}
	if n, ok := signalNumber(cs.StopSignal); ok {
		r.Supervision.StopSignal = n
	}
	if h := cs.Healthcheck; h != nil && !h.Disabled && len(h.Test) > 0 {
		r.Supervision.Healthcheck = &monitor.Healthcheck{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout,
			StartPeriod: h.StartPeriod, StartInterval: h.StartInterval, Retries: h.Retries}
	}
	return r
}

// prepareMounts makes binds, volumes (named, anonymous) and tmpfs mounts.
func (b *Backend) prepareMounts(cs backends.ContainerSpec, st *stored, undo *[]func()) ([]specs.Mount, error) {
	var out []specs.Mount
	for _, m := range cs.Binds {
		if m.CreateHostPath {
			if err := os.MkdirAll(m.Source, 0o755); err != nil {
				return nil, fmt.Errorf("bind %s: %w", m.Source, err)
			}
		}
		if p := strings.TrimPrefix(m.Propagation, "r"); p == "shared" {
			if err := ensureShared(m.Source); err != nil {
				return nil, err
			}
		}
		out = append(out, bindMount(m.Source, m.Target, m.ReadOnly, m.Propagation))
		st.Mounts = append(st.Mounts, backends.MountPoint{Type: "bind", Source: m.Source, Destination: m.Target, ReadOnly: m.ReadOnly})
	}
	for _, v := range cs.Volumes {
		var vol backends.Volume
		var err error
		if v.Name == "" {
			vol, err = b.anonymousVolume(st.ID, v.Driver, v.DriverOpts)
			if err == nil {
				name := vol.Name
				st.Anonymous = append(st.Anonymous, name)
				*undo = append(*undo, func() { _ = b.RemoveVolume(context.Background(), name, true) })
			}
		} else {
			vol, err = b.EnsureVolume(context.Background(), backends.VolumeSpec{Volume: backendsVolume(v)})
		}
		if err == nil {
			err = b.mountDevice(vol)
		}
		if err != nil {
			return nil, err
		}
		src := vol.Mountpoint
		if v.Subpath != "" {
			src = filepath.Join(src, filepath.Clean("/"+v.Subpath))
		}
		out = append(out, bindMount(src, v.Target, v.ReadOnly, ""))
		st.Mounts = append(st.Mounts, backends.MountPoint{Type: "volume", Name: vol.Name, Source: src, Destination: v.Target, ReadOnly: v.ReadOnly})
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
		st.Mounts = append(st.Mounts, backends.MountPoint{Type: "tmpfs", Destination: t.Target})
	}
	return out, nil
}

// prepareNetwork gives the container its network namespace: its own,
// attached to its networks (ports on replica 1 only: one publisher), or
// none of its own (host), or another container's.
func (b *Backend) prepareNetwork(ctx context.Context, cs backends.ContainerSpec, st *stored, in *specInput, undo *[]func()) error {
	dir := b.cfg.containerDir(st.ID)
	in.resolv = filepath.Join(dir, "resolv.conf")
	switch cs.Network.Kind {
	case "host":
		in.resolv, in.hostsPath = "", ""
		return nil
	case "container":
		other, err := b.readStored(b.resolveID(ctx, cs.Network.Container))
		if err != nil || other.Netns == "" {
			return fmt.Errorf("networkMode container:%s: no such container with a network namespace: %w", cs.Network.Container, errdefs.ErrNotFound)
		}
		in.netns, in.hostsPath = other.Netns, filepath.Join(b.cfg.containerDir(other.ID), "hosts")
		in.resolv = filepath.Join(b.cfg.containerDir(other.ID), "resolv.conf")
		st.Netns = other.Netns
		return nil
	}
	netns, err := b.net.CreateNetns(ctx, st.ID)
	if err != nil {
		return err
	}
	*undo = append(*undo, func() { _ = b.net.RemoveNetns(context.Background(), st.ID) })
	st.Netns, in.netns = netns, netns
	in.hostsPath = filepath.Join(dir, "hosts")
	var extra []cni.HostEntry
	for _, h := range cs.ExtraHosts {
		if ip, err := netip.ParseAddr(h.IP); err == nil {
			extra = append(extra, cni.HostEntry{Name: h.Host, IP: ip})
		}
	}
	if cs.Network.Kind == "none" {
		return writeHostsAlone(in.hostsPath, in.hostname, extra, in.resolv, cs)
	}
	atts := cs.Networks
	if len(atts) == 0 {
		if _, err := b.EnsureNetwork(ctx, backends.NetworkSpec{Network: backendsNetwork(defaultNetwork)}); err != nil {
			return err
		}
		atts = []backends.NetworkAttachment{{Network: defaultNetwork}}
	}
	ao := cni.AttachOptions{ContainerID: st.ID, Netns: netns, Hostname: in.hostname, Names: []string{cs.Name}, HostsPath: in.hostsPath, ExtraHosts: extra}
	for _, a := range atts {
		ep := cni.Endpoint{Network: a.Network, Aliases: a.Aliases}
		if a.IPv4 != "" {
			ep.IPv4, _ = netip.ParseAddr(a.IPv4)
		}
		ao.Networks = append(ao.Networks, ep)
	}
	if cs.Replica <= 1 {
		ports, err := portMappings(cs.Ports)
		if err != nil {
			return err
		}
		ao.Ports = ports
	}
	res, err := b.net.Attach(ctx, ao)
	if err != nil {
		return err
	}
	*undo = append(*undo, func() { _, _ = b.net.Detach(context.Background(), cni.DetachOptions{ContainerID: st.ID, Netns: netns}) })
	st.Networks = map[string]backends.EndpointInfo{}
	for i, att := range res.Attachments {
		st.Networks[att.Network] = backends.EndpointInfo{IPAddress: att.IP.String(), IPPrefixLen: att.PrefixLen, Gateway: att.Gateway.String(),
			MacAddress: att.MAC, Aliases: att.Aliases, NetworkID: att.Network}
		for _, p := range att.Ports {
			st.Ports = append(st.Ports, backends.PortBinding{HostIP: hostIP(p.HostIP), HostPort: int(p.HostPort), ContainerPort: int(p.ContainerPort), Protocol: p.Protocol})
		}
		if i == 0 {
			if err := writeResolvConf(in.resolv, cs, att.Gateway.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// portMappings publishes fixed host ports; a range takes its first port
// and port 0 a free one picked now (portmap needs a number).
func portMappings(ps []backends.PortMapping) ([]cni.PortMapping, error) {
	var out []cni.PortMapping
	for _, p := range ps {
		m := cni.PortMapping{HostPort: uint16(p.HostPort), ContainerPort: uint16(p.ContainerPort), Protocol: p.Protocol}
		if p.HostIP != "" {
			ip, err := netip.ParseAddr(p.HostIP)
			if err != nil {
				return nil, fmt.Errorf("ports: host IP %q: %w", p.HostIP, errdefs.ErrInvalidArgument)
			}
			m.HostIP = ip
		}
		if p.Protocol == "sctp" {
			return nil, fmt.Errorf("ports: sctp is not supported by the containerd backend: %w", errdefs.ErrNotImplemented)
		}
		if m.HostPort == 0 {
			free, err := freePort(p.Protocol, p.HostIP)
			if err != nil {
				return nil, err
			}
			m.HostPort = free
		}
		out = append(out, m)
	}
	return out, nil
}

func hostIP(a netip.Addr) string {
	if !a.IsValid() || a.IsUnspecified() {
		return "0.0.0.0"
	}
	return a.String()
}

// sharedNamespace is the namespace path of a container shared with.
func (b *Backend) sharedNamespace(m backends.NamespaceMode, kind string) (string, error) {
	if m.Kind != "container" {
		return "", nil
	}
	rec, err := b.records.Read(b.resolveID(context.Background(), m.Container))
	if err != nil || rec.State.Pid == 0 {
		return "", fmt.Errorf("container %s is not running: %w", m.Container, errdefs.ErrFailedPrecondition)
	}
	return fmt.Sprintf("/proc/%d/ns/%s", rec.State.Pid, kind), nil
}

// writeFiles writes secrets and configs under the container's directory,
// to be bind-mounted read-only at their targets.
func writeFiles(dir string, files []backends.File) ([]specs.Mount, error) {
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
		out = append(out, bindMount(p, f.Target, true, ""))
	}
	return out, nil
}

// writeResolvConf points the container at the resolver on its first
// network's gateway (names of peers, then upstream), or at its own DNS.
func writeResolvConf(path string, cs backends.ContainerSpec, gateway string) error {
	var b strings.Builder
	servers := cs.DNS
	if len(servers) == 0 {
		servers = []string{gateway}
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(cs.DNSSearch) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(cs.DNSSearch, " "))
	}
	if len(cs.DNSOptions) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(cs.DNSOptions, " "))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeHostsAlone writes the hosts file and resolv.conf of a container on
// no network.
func writeHostsAlone(hosts, hostname string, extra []cni.HostEntry, resolv string, cs backends.ContainerSpec) error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "127.0.1.1\t%s\n", hostname)
	for _, h := range extra {
		fmt.Fprintf(&b, "%s\t%s\n", h.IP, h.Name)
	}
	if err := os.WriteFile(hosts, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return writeResolvConf(resolv, cs, "127.0.0.1")
}
