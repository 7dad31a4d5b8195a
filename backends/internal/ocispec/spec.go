package ocispec

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends"
)

// Docker's defaults the OCI default spec does not share.
const (
	defaultShmKB = 64 << 10 // 64 MiB /dev/shm
	cfsPeriod    = 100000   // µs, Docker's CFS period for cpus
	initPath     = "/sbin/docker-init"
)

// Input is what the spec is built from besides the container spec: the
// image config and the host paths the backend's Create prepared. It is
// plain data; Opts does no I/O beyond reading the host's limits.
type Input struct {
	Spec       backends.ContainerSpec
	Image      imagespec.ImageConfig
	Backend    string // the backend's name, for messages ("containerd", "bare")
	RootFS     string // the root's absolute path, or "" for the runtime's default (containerd's snapshot)
	Netns      string // namespace path, "" for none of our own (host)
	PIDNS      string // /proc/<pid>/ns/pid of a container shared with, or ""
	IPCNS      string // likewise for ipc
	HostsPath  string // bind-mounted at /etc/hosts, or ""
	ResolvConf string // bind-mounted at /etc/resolv.conf, or ""
	Hostname   string
	Mounts     []specs.Mount // binds, volumes, tmpfs, files
	InitBin    string        // host path of a static init, when Spec.Init (FindInit)
}

// Opts maps a resolved ContainerSpec onto OCI spec options, to apply
// with containerd's client (client.WithNewSpec) or without one
// (oci.GenerateSpec). Values were validated and resolved upstream; what
// OCI cannot say is an InvalidArgument.
func Opts(in Input) ([]oci.SpecOpts, error) {
	cs := in.Spec
	// Docker's defaults over containerd's: privileges may be gained
	// (setuid binaries work) unless asked otherwise, and cgroupfs is visible
	// read-only so a workload can read its own limits.
	opts := []oci.SpecOpts{oci.WithDefaultSpec()}
	if in.RootFS != "" {
		opts = append(opts, oci.WithRootFSPath(in.RootFS))
	}
	opts = append(opts, oci.WithDefaultUnixDevices, oci.WithoutRunMount, oci.WithNewPrivileges,
		withCgroupMount, withImageConfig(in.Image))
	if cs.UTS.Kind != "host" {
		opts = append(opts, oci.WithHostname(in.Hostname))
		if cs.Domainname != "" {
			// runc before 1.2 ignores the spec's domainname; the UTS
			// namespace's sysctl is what every runc honors.
			opts = append(opts, oci.WithDomainname(cs.Domainname), withSysctls(map[string]string{"kernel.domainname": cs.Domainname}))
		}
	}
	args := processArgs(cs, in.Image)
	if len(args) == 0 {
		return nil, fmt.Errorf("no command: the image has none and the spec gives none: %w", errdefs.ErrInvalidArgument)
	}
	if cs.Init {
		if in.InitBin == "" {
			return nil, fmt.Errorf("init: needs a static init on the host (docker-init, tini-static or catatonit): apt-get install tini: %w", errdefs.ErrFailedPrecondition)
		}
		args = append([]string{initPath, "--"}, args...)
		in.Mounts = append(slices.Clone(in.Mounts), specs.Mount{Destination: initPath, Type: "bind", Source: in.InitBin, Options: []string{"rbind", "ro"}})
	}
	opts = append(opts, oci.WithProcessArgs(args...), oci.WithEnv(cs.Env), withDefaultPath)
	if cs.WorkingDir != "" {
		opts = append(opts, oci.WithProcessCwd(cs.WorkingDir))
	}
	if u := cmp.Or(cs.User, in.Image.User); u != "" {
		opts = append(opts, oci.WithUser(u))
	}
	if len(cs.GroupAdd) > 0 {
		opts = append(opts, oci.WithAppendAdditionalGroups(cs.GroupAdd...))
	}
	if cs.TTY {
		opts = append(opts, oci.WithTTY)
	}
	if cs.ReadOnly {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	opts = append(opts, namespaceOpts(in)...)
	sec, err := securityOpts(cs, in.Backend)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sec...)
	opts = append(opts, resourceOpts(cs)...)
	mounts := slices.Clone(in.Mounts)
	if in.HostsPath != "" {
		mounts = append(mounts, specs.Mount{Destination: "/etc/hosts", Type: "bind", Source: in.HostsPath, Options: []string{"rbind", "rw"}})
	}
	if in.ResolvConf != "" {
		mounts = append(mounts, specs.Mount{Destination: "/etc/resolv.conf", Type: "bind", Source: in.ResolvConf, Options: []string{"rbind", "rw"}})
	}
	opts = append(opts, oci.WithMounts(mounts), withShm(cs.ShmSize))
	var props []string
	for _, m := range cs.Binds {
		props = append(props, m.Propagation)
	}
	if p := rootPropagation(props); p != "" {
		opts = append(opts, withRootPropagation(p))
	}
	return opts, nil
}

// withImageConfig applies the image's environment and working directory
// (arguments and user are decided by processArgs and Opts).
func withImageConfig(img imagespec.ImageConfig) oci.SpecOpts {
	return func(ctx context.Context, c oci.Client, ctr *containers.Container, s *oci.Spec) error {
		if len(img.Env) > 0 {
			if err := oci.WithEnv(img.Env)(ctx, c, ctr, s); err != nil {
				return err
			}
		}
		if img.WorkingDir != "" {
			s.Process.Cwd = img.WorkingDir
		}
		return nil
	}
}

// DefaultPath is the PATH dockerd gives a container whose image and spec
// set none (an image from `docker import`, FROM scratch with a static
// binary): without it the runtime cannot find a command such as "sh".
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// withDefaultPath puts DefaultPath first in an environment with no PATH.
func withDefaultPath(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Process == nil {
		s.Process = &specs.Process{}
	}
	for _, kv := range s.Process.Env {
		if strings.HasPrefix(kv, "PATH=") {
			return nil
		}
	}
	s.Process.Env = append([]string{"PATH=" + DefaultPath}, s.Process.Env...)
	return nil
}

// processArgs is Docker's rule: an entrypoint given without a command
// drops the image's command.
func processArgs(cs backends.ContainerSpec, img imagespec.ImageConfig) []string {
	ep, cmd := img.Entrypoint, img.Cmd
	if cs.Entrypoint != nil {
		ep, cmd = cs.Entrypoint, nil
	}
	if cs.Command != nil {
		cmd = cs.Command
	}
	return append(slices.Clone(ep), cmd...)
}

func namespaceOpts(in Input) []oci.SpecOpts {
	cs := in.Spec
	var opts []oci.SpecOpts
	switch {
	case cs.Network.Kind == "host":
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
	case in.Netns != "":
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: in.Netns}))
	}
	share := func(t specs.LinuxNamespaceType, m backends.NamespaceMode, path string) {
		switch {
		case m.Kind == "host":
			opts = append(opts, oci.WithHostNamespace(t))
		case path != "":
			opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: t, Path: path}))
		}
	}
	share(specs.PIDNamespace, cs.PID, in.PIDNS)
	share(specs.IPCNamespace, cs.IPC, in.IPCNS)
	share(specs.UTSNamespace, cs.UTS, "")
	switch cs.Cgroup.Kind {
	case "host":
		opts = append(opts, oci.WithHostNamespace(specs.CgroupNamespace))
	case "private":
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.CgroupNamespace}))
	}
	// UserNS "host" is runc's default: no user namespace.
	return opts
}

func securityOpts(cs backends.ContainerSpec, backend string) ([]oci.SpecOpts, error) {
	var opts []oci.SpecOpts
	confined := !cs.Privileged
	if cs.Privileged {
		opts = append(opts, oci.WithPrivileged, oci.WithAllDevicesAllowed, oci.WithHostDevices, oci.WithWriteableSysfs, oci.WithWriteableCgroupfs)
	}
	sec := cs.Security
	switch sec.Seccomp {
	case "":
	case "unconfined":
		confined = false
	default:
		return nil, fmt.Errorf("securityOpt seccomp=%s: custom seccomp profiles are not supported by the %s backend yet: %w", sec.Seccomp, backend, errdefs.ErrNotImplemented)
	}
	if len(sec.Mask)+len(sec.Unmask) > 0 || sec.WritableCgroups {
		return nil, fmt.Errorf("securityOpt mask, unmask and writable-cgroups are podman's: the %s backend has none: %w", backend, errdefs.ErrNotImplemented)
	}
	if sec.NoNewPrivileges {
		opts = append(opts, oci.WithNoNewPrivileges)
	}
	if sec.SystemPathsUnconfined {
		opts = append(opts, oci.WithMaskedPaths(nil), oci.WithReadonlyPaths(nil))
	}
	// AppArmor and SELinux: this host has neither, and runc ignores
	// neither, so the options are accepted and have no effect.
	opts = append(opts, withCapabilities(cs.CapAdd, cs.CapDrop))
	if confined {
		// After the capabilities: the default profile allows what they
		// grant (mount(2) with CAP_SYS_ADMIN, as Docker's does).
		opts = append(opts, seccomp.WithDefaultProfile())
	}
	for _, d := range cs.Devices {
		opts = append(opts, withDevice(d.Source, cmp.Or(d.Target, d.Source), cmp.Or(d.Permissions, "rwm")))
	}
	for _, r := range cs.DeviceCgroupRules {
		rule, err := deviceRule(r)
		if err != nil {
			return nil, err
		}
		opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
			s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, rule)
			return nil
		})
	}
	if len(cs.Sysctls) > 0 {
		opts = append(opts, withSysctls(cs.Sysctls))
	}
	return opts, nil
}

func withSysctls(kv map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux.Sysctl == nil {
			s.Linux.Sysctl = map[string]string{}
		}
		maps.Copy(s.Linux.Sysctl, kv)
		return nil
	}
}

// withCgroupMount mounts the container's cgroups read-only at
// /sys/fs/cgroup, as Docker does (containerd's default spec has none).
func withCgroupMount(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	s.Mounts = append(s.Mounts, specs.Mount{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup",
		Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}})
	return nil
}

// withCapabilities applies cap_drop then cap_add, Docker's order, with
// "ALL" in either and names with or without the CAP_ prefix.
func withCapabilities(add, drop []string) oci.SpecOpts {
	// The runtime's names carry CAP_.
	norm := func(cs []string) []string {
		var out []string
		for _, c := range cs {
			if c != "ALL" {
				c = "CAP_" + c
			}
			out = append(out, c)
		}
		return out
	}
	return func(ctx context.Context, cl oci.Client, ctr *containers.Container, s *oci.Spec) error {
		d, a := norm(drop), norm(add)
		if slices.Contains(d, "ALL") {
			if err := oci.WithCapabilities(nil)(ctx, cl, ctr, s); err != nil {
				return err
			}
		} else if err := oci.WithDroppedCapabilities(d)(ctx, cl, ctr, s); err != nil {
			return err
		}
		if slices.Contains(a, "ALL") {
			return oci.WithAllCurrentCapabilities(ctx, cl, ctr, s)
		}
		return oci.WithAddedCapabilities(a)(ctx, cl, ctr, s)
	}
}

// withDevice passes a host device in at target.
func withDevice(source, target, perms string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		dev, err := oci.DeviceFromPath(source)
		if err != nil {
			return fmt.Errorf("devices: %s: %w", source, err)
		}
		dev.Path = target
		s.Linux.Devices = append(s.Linux.Devices, *dev)
		major, minor := dev.Major, dev.Minor
		s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{Allow: true, Type: dev.Type, Major: &major, Minor: &minor, Access: perms})
		return nil
	}
}

// deviceRule parses a device cgroup rule such as "c 1:3 mr".
func deviceRule(r string) (specs.LinuxDeviceCgroup, error) {
	f := strings.Fields(r)
	bad := fmt.Errorf("deviceCgroupRules: %q is not 'TYPE MAJOR:MINOR ACCESS': %w", r, errdefs.ErrInvalidArgument)
	if len(f) != 3 {
		return specs.LinuxDeviceCgroup{}, bad
	}
	maj, mnr, ok := strings.Cut(f[1], ":")
	if !ok {
		return specs.LinuxDeviceCgroup{}, bad
	}
	num := func(s string) (*int64, error) {
		if s == "*" {
			return nil, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return &n, err
	}
	major, err1 := num(maj)
	minor, err2 := num(mnr)
	if err1 != nil || err2 != nil {
		return specs.LinuxDeviceCgroup{}, bad
	}
	return specs.LinuxDeviceCgroup{Allow: true, Type: f[0], Major: major, Minor: minor, Access: f[2]}, nil
}

func resourceOpts(cs backends.ContainerSpec) []oci.SpecOpts {
	var opts []oci.SpecOpts
	r := cs.Resources
	if r.Memory > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(r.Memory)))
	}
	if r.CPUs > 0 {
		opts = append(opts, oci.WithCPUCFS(int64(math.Round(r.CPUs*cfsPeriod)), cfsPeriod))
	}
	if r.Pids > 0 {
		opts = append(opts, oci.WithPidsLimit(r.Pids))
	}
	if r.MemoryReservation > 0 {
		res := r.MemoryReservation
		opts = append(opts, func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
			if s.Linux.Resources.Memory == nil {
				s.Linux.Resources.Memory = &specs.LinuxMemory{}
			}
			s.Linux.Resources.Memory.Reservation = &res
			return nil
		})
	}
	// nofile: the host's hard limit (the OCI default of 1024 is lower than
	// Docker's, and more than the host allows fails).
	var host syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &host); err == nil {
		opts = append(opts, oci.WithRlimit(&specs.POSIXRlimit{Type: "RLIMIT_NOFILE", Soft: host.Max, Hard: host.Max}))
	}
	for _, u := range cs.Ulimits {
		opts = append(opts, oci.WithRlimit(&specs.POSIXRlimit{Type: "RLIMIT_" + strings.ToUpper(u.Name), Soft: uint64(u.Soft), Hard: uint64(u.Hard)}))
	}
	return opts
}

// withShm sizes /dev/shm (Docker's 64 MiB by default).
func withShm(size int64) oci.SpecOpts {
	kb := int64(defaultShmKB)
	if size > 0 {
		kb = size / 1024
	}
	return oci.WithDevShmSize(kb)
}

// FindInit returns a static init binary on the host, or "" (Input.InitBin).
func FindInit() string {
	for _, p := range []string{"/usr/sbin/docker-init", "/usr/bin/docker-init", "/usr/bin/tini-static", "/usr/libexec/podman/catatonit", "/usr/bin/catatonit"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// BindMount is a bind of a host path (propagation "" for runc's default).
func BindMount(source, target string, readOnly bool, propagation string) specs.Mount {
	opts := []string{"rbind", "rw"}
	if readOnly {
		opts[1] = "ro"
	}
	if propagation != "" {
		opts = append(opts, propagation)
	}
	return specs.Mount{Destination: target, Type: "bind", Source: filepath.Clean(source), Options: opts}
}
