package kubernetes

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// renderInput is a container spec plus what Create looked up for it.
type renderInput struct {
	cs backends.ContainerSpec
	// id is the new container's ID; name its pod's (and record's) name.
	id, name string
	// uid, gid: the resolved numeric user (nil: the image's).
	uid, gid *int64
	// groups: supplemental groups, numeric.
	groups []int64
	// hostPorts: the host port chosen for each of cs.Ports (same order).
	hostPorts []int
	// volumes maps a named volume's runtime name to how it is mounted.
	volumes map[string]volumeSource
	cfg     config
}

// volumeSource is how a volume reaches a pod: a claim, or (a volume whose
// driver options bind a host directory or mount NFS) that source itself.
type volumeSource struct {
	claim  string
	direct *corev1.VolumeSource
	// unmountable: why a recorded volume has no pod form (its driver
	// options); mounting it fails with that.
	unmountable string
}

// rendered is a container as Kubernetes sees it: the pod to run (its
// metadata is set when it starts) and the files it mounts.
type rendered struct {
	pod    corev1.PodSpec
	labels map[string]string // the pod's labels beyond identity: network membership
	files  map[string][]byte // the files Secret's data
	rec    record
}

// Names inside the pod.
const (
	filesVolume = "cornus-files"
	shmVolume   = "cornus-shm"
)

// render maps a container spec onto a pod. It does no I/O; every value it
// cannot express is an errdefs.InvalidArgument or NotImplemented error
// naming the field (what Capabilities declares a gap is left out
// silently: the engine warned about it).
func render(in renderInput) (rendered, error) {
	cs := in.cs
	out := rendered{labels: map[string]string{}, files: map[string][]byte{}}
	c := renderContainer(in)
	pod, err := renderPodSpec(in)
	if err != nil {
		return out, err
	}
	if err := renderNamespaces(cs, &pod); err != nil {
		return out, err
	}
	if err := renderSecurity(cs, c.SecurityContext, in.cfg.userNS); err != nil {
		return out, err
	}
	if pm := c.SecurityContext.ProcMount; pm != nil && *pm == corev1.UnmaskedProcMount {
		// Kubernetes unmasks /proc only for a pod in a user namespace.
		pod.HostUsers = ptr(false)
	}
	for name, v := range cs.Sysctls {
		pod.SecurityContext.Sysctls = append(pod.SecurityContext.Sysctls, corev1.Sysctl{Name: name, Value: v})
	}
	sort.Slice(pod.SecurityContext.Sysctls, func(i, j int) bool { return pod.SecurityContext.Sysctls[i].Name < pod.SecurityContext.Sysctls[j].Name })
	renderDNS(in, &pod, out.labels)
	ports, err := renderPorts(in, &c)
	if err != nil {
		return out, err
	}
	c.Resources = renderResources(cs.Resources)
	if err := renderStorage(in, &pod, &c, out.files); err != nil {
		return out, err
	}
	probe := renderProbe(cs.Healthcheck)
	c.ReadinessProbe = probe
	if in.cfg.liveness && probe != nil {
		c.LivenessProbe = probe.DeepCopy()
	}
	if cs.StopSignal != 0 && cs.StopSignal != spec.Signal(syscall.SIGTERM) {
		// Kubernetes sends SIGTERM. Stop sends the container's own signal
		// first (kill inside the container); a preStop hook does the same
		// when the pod is deleted by anyone else (needs kill in the
		// image; without it the kubelet goes on with SIGTERM).
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: killCommand(int(cs.StopSignal), cs.Init)}}}
	}
	pod.Containers = []corev1.Container{c}
	pod.ImagePullSecrets = pullSecrets(cs.PullAuth)
	if in.cs.Sidecar != nil {
		if err := renderSidecar(in, &pod, &pod.Containers[0], out.files); err != nil {
			return out, err
		}
	}
	out.pod = pod
	out.rec = newRecord(in, ports)
	return out, nil
}

// renderContainer is the app's container: image, command, environment,
// terminal and user.
func renderContainer(in renderInput) corev1.Container {
	cs := in.cs
	c := corev1.Container{
		Name:            containerName(cs.App),
		Image:           cs.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		WorkingDir:      cs.WorkingDir,
		TTY:             cs.TTY,
		Stdin:           cs.StdinOpen,
		StdinOnce:       cs.StdinOpen && cs.StdinOnce,
		// The image's ENTRYPOINT stays unless the spec sets one.
		Command: slices.Clone(cs.Entrypoint),
		Args:    slices.Clone(cs.Command),
		SecurityContext: &corev1.SecurityContext{
			RunAsUser: in.uid, RunAsGroup: in.gid,
		},
	}
	if cs.Entrypoint != nil && len(cs.Entrypoint) == 0 && cs.Command != nil {
		// An entrypoint cleared to run the command alone.
		c.Command, c.Args = slices.Clone(cs.Command), nil
	}
	for _, kv := range cs.Env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	return c
}

// renderPodSpec is the pod around it: restart, grace period, hostname,
// platform, and what Docker does not give a container (service links, API
// credentials).
func renderPodSpec(in renderInput) (corev1.PodSpec, error) {
	cs := in.cs
	pod := corev1.PodSpec{
		RestartPolicy:                 restartPolicy(cs.Restart),
		EnableServiceLinks:            ptr(false), // Docker injects no *_SERVICE_HOST variables
		AutomountServiceAccountToken:  ptr(false), // nor API credentials
		TerminationGracePeriodSeconds: ptr(int64(10)),
		ShareProcessNamespace:         ptr(cs.Init),
		SecurityContext:               &corev1.PodSecurityContext{SupplementalGroups: in.groups},
	}
	if cs.StopTimeout != nil {
		pod.TerminationGracePeriodSeconds = ptr(int64(math.Ceil(cs.StopTimeout.Seconds())))
	}
	if cs.Hostname != "" {
		if !isDNSLabel(cs.Hostname) {
			return pod, invalidf("hostname %q: Kubernetes needs an RFC 1123 label (lowercase letters, digits and '-', at most 63)", cs.Hostname)
		}
		pod.Hostname = cs.Hostname
	}
	if cs.Platform != nil {
		pod.NodeSelector = map[string]string{"kubernetes.io/os": cs.Platform.OS, "kubernetes.io/arch": cs.Platform.Architecture}
	}
	return pod, nil
}

func restartPolicy(r spec.RestartPolicy) corev1.RestartPolicy {
	switch r.Name {
	case spec.RestartAlways, spec.RestartUnlessStopped:
		return corev1.RestartPolicyAlways
	case spec.RestartOnFailure:
		return corev1.RestartPolicyOnFailure
	}
	return corev1.RestartPolicyNever
}

// killCommand signals the container's main process from inside it: PID 1,
// or with an init (a shared PID namespace, the sandbox is PID 1) every
// process but the sandbox.
func killCommand(signal int, init bool) []string {
	target := "1"
	if init {
		target = "-1"
	}
	return []string{"kill", "-" + strconv.Itoa(signal), target}
}

func renderNamespaces(cs backends.ContainerSpec, pod *corev1.PodSpec) error {
	switch cs.Network.Kind {
	case "", "bridge", "default", "none":
		// none is a declared gap: pods always join the cluster network.
	case "host":
		pod.HostNetwork = true
		pod.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	default:
		return notImplementedf("networkMode %q: a pod cannot join another pod's network namespace", cs.Network.Kind)
	}
	for _, ns := range []struct {
		field string
		mode  backends.NamespaceMode
		host  *bool
	}{{"pidMode", cs.PID, &pod.HostPID}, {"ipcMode", cs.IPC, &pod.HostIPC}} {
		switch ns.mode.Kind {
		case "", "private", "shareable":
		case "host":
			*ns.host = true
		default:
			return notImplementedf("%s %q: a pod cannot share another pod's namespace", ns.field, ns.mode.Kind)
		}
	}
	// utsMode and cgroupnsMode are declared gaps; usernsMode "host" is
	// what pods get by default (hostUsers).
	if k := cs.UserNS.Kind; k != "" && k != "host" {
		return notImplementedf("usernsMode %q: Kubernetes runs a pod in the host's user namespace or, with hostUsers: false, in one of its own", k)
	}
	return nil
}

// renderSecurity maps privileges, capabilities and security options.
func renderSecurity(cs backends.ContainerSpec, sc *corev1.SecurityContext, userNS bool) error {
	if cs.Privileged {
		sc.Privileged = ptr(true)
	}
	if cs.ReadOnly {
		sc.ReadOnlyRootFilesystem = ptr(true)
	}
	if len(cs.CapAdd)+len(cs.CapDrop) > 0 {
		sc.Capabilities = &corev1.Capabilities{}
		for _, c := range cs.CapAdd {
			sc.Capabilities.Add = append(sc.Capabilities.Add, corev1.Capability(c))
		}
		for _, c := range cs.CapDrop {
			sc.Capabilities.Drop = append(sc.Capabilities.Drop, corev1.Capability(c))
		}
	}
	sec := cs.Security
	if sec.NoNewPrivileges {
		sc.AllowPrivilegeEscalation = ptr(false)
	}
	switch sec.Seccomp {
	case "":
		// Docker's default is its seccomp profile; a kubelet's (without
		// --seccomp-default) is none. A privileged container runs without.
		if !cs.Privileged {
			sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}
	case "unconfined":
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	default:
		return notImplementedf("securityOpt seccomp=%s: a seccomp profile is a file on each node (seccompProfile localhostProfile), not sent with the pod", sec.Seccomp)
	}
	switch sec.AppArmor {
	case "":
	case "unconfined":
		sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	default:
		sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr(sec.AppArmor)}
	}
	for _, l := range sec.SELinux {
		if err := seLinux(l, sc); err != nil {
			return err
		}
	}
	if sec.SystemPathsUnconfined && userNS { // else a declared gap
		sc.ProcMount = ptr(corev1.UnmaskedProcMount)
	}
	if len(sec.Mask)+len(sec.Unmask) > 0 || sec.WritableCgroups {
		return notImplementedf("securityOpt mask, unmask and writable-cgroups are podman's: they have no Kubernetes form")
	}
	return nil
}

func seLinux(label string, sc *corev1.SecurityContext) error {
	if sc.SELinuxOptions == nil {
		sc.SELinuxOptions = &corev1.SELinuxOptions{}
	}
	k, v, _ := strings.Cut(label, ":")
	switch k {
	case "disable":
		sc.SELinuxOptions.Type = "spc_t" // the unconfined container type
	case "user":
		sc.SELinuxOptions.User = v
	case "role":
		sc.SELinuxOptions.Role = v
	case "type":
		sc.SELinuxOptions.Type = v
	case "level":
		sc.SELinuxOptions.Level = v
	default:
		return invalidf("securityOpt label=%s: unknown label option", label)
	}
	return nil
}

// renderDNS sets the pod's resolver: the cluster DNS first (peers resolve
// through their networks' search domains), then the spec's servers,
// search domains and options; and /etc/hosts entries.
func renderDNS(in renderInput, pod *corev1.PodSpec, labels map[string]string) {
	cs := in.cs
	dc := &corev1.PodDNSConfig{Nameservers: slices.Clone(cs.DNS), Searches: slices.Clone(cs.DNSSearch)}
	for _, n := range cs.Networks {
		obj := netObjectName(n.Network)
		labels[netLabelPrefix+obj] = "1"
		dc.Searches = append(dc.Searches, obj+"."+in.cfg.namespace+".svc."+in.cfg.clusterDomain)
	}
	for _, o := range cs.DNSOptions {
		k, v, ok := strings.Cut(o, ":")
		opt := corev1.PodDNSConfigOption{Name: k}
		if ok {
			opt.Value = ptr(v)
		}
		dc.Options = append(dc.Options, opt)
	}
	if len(dc.Nameservers)+len(dc.Searches)+len(dc.Options) > 0 {
		pod.DNSConfig = dc
	}
	byIP := map[string][]string{}
	for _, h := range cs.ExtraHosts {
		ip := h.IP
		if ip == "host-gateway" {
			continue // no portable address for "the host" in a cluster
		}
		byIP[ip] = append(byIP[ip], h.Host)
	}
	for _, ip := range slices.Sorted(maps.Keys(byIP)) {
		pod.HostAliases = append(pod.HostAliases, corev1.HostAlias{IP: ip, Hostnames: byIP[ip]})
	}
}

// renderPorts declares the container's ports; published ones get their
// host port on the node (the publish mode hostport), or are left to a
// Service (nodeport, loadbalancer). It returns the bindings to report.
func renderPorts(in renderInput, c *corev1.Container) ([]backends.PortBinding, error) {
	cs := in.cs
	var out []backends.PortBinding
	seen := map[string]bool{}
	for i, p := range cs.Ports {
		proto, err := protocol(p.Protocol)
		if err != nil {
			return nil, err
		}
		cp := corev1.ContainerPort{ContainerPort: int32(p.ContainerPort), Protocol: proto}
		host := 0
		if i < len(in.hostPorts) {
			host = in.hostPorts[i]
		}
		if in.cfg.publish == PublishHostPort {
			cp.HostPort, cp.HostIP = int32(host), p.HostIP
		}
		key := fmt.Sprintf("%d/%s/%s/%d", p.ContainerPort, proto, p.HostIP, host)
		if !seen[key] {
			seen[key] = true
			c.Ports = append(c.Ports, cp)
		}
		out = append(out, backends.PortBinding{HostIP: p.HostIP, HostPort: host, ContainerPort: p.ContainerPort, Protocol: strings.ToLower(string(proto))})
	}
	for _, e := range cs.Expose {
		proto, err := protocol(e.Protocol)
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%d/%s", e.Port, proto)
		dup := false
		for _, have := range c.Ports {
			dup = dup || (int(have.ContainerPort) == e.Port && have.Protocol == proto)
		}
		if !dup && !seen[key] {
			seen[key] = true
			c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: int32(e.Port), Protocol: proto})
		}
	}
	return out, nil
}

func protocol(p string) (corev1.Protocol, error) {
	switch strings.ToLower(p) {
	case "", "tcp":
		return corev1.ProtocolTCP, nil
	case "udp":
		return corev1.ProtocolUDP, nil
	case "sctp":
		return corev1.ProtocolSCTP, nil
	}
	return "", invalidf("port protocol %q", p)
}

// renderResources: limits are limits, reservations are requests.
func renderResources(r backends.Resources) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	if r.CPUs > 0 {
		set(&out.Limits, corev1.ResourceCPU, *resource.NewMilliQuantity(int64(math.Ceil(r.CPUs*1000)), resource.DecimalSI))
	}
	if r.Memory > 0 {
		set(&out.Limits, corev1.ResourceMemory, *resource.NewQuantity(r.Memory, resource.BinarySI))
	}
	if r.CPUReservation > 0 {
		set(&out.Requests, corev1.ResourceCPU, *resource.NewMilliQuantity(int64(math.Ceil(r.CPUReservation*1000)), resource.DecimalSI))
	}
	if r.MemoryReservation > 0 {
		set(&out.Requests, corev1.ResourceMemory, *resource.NewQuantity(r.MemoryReservation, resource.BinarySI))
	}
	return out
}

// renderProbe turns a healthcheck into an exec probe with its timings
// (Kubernetes counts whole seconds: sub-second intervals become 1 s).
func renderProbe(h *backends.Healthcheck) *corev1.Probe {
	if h == nil || h.Disabled || len(h.Test) == 0 {
		return nil
	}
	var cmd []string
	switch h.Test[0] {
	case "CMD":
		cmd = slices.Clone(h.Test[1:])
	case "CMD-SHELL":
		if len(h.Test) < 2 {
			return nil
		}
		cmd = []string{"/bin/sh", "-c", h.Test[1]}
	default:
		return nil
	}
	retries := h.Retries
	if retries <= 0 {
		retries = 3
	}
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}},
		PeriodSeconds:    seconds(h.Interval, 30*time.Second),
		TimeoutSeconds:   seconds(h.Timeout, 30*time.Second),
		FailureThreshold: int32(retries),
		SuccessThreshold: 1,
	}
}

func seconds(d, def time.Duration) int32 {
	if d <= 0 {
		d = def
	}
	return int32(max(1, math.Ceil(d.Seconds())))
}

func ptr[T any](v T) *T { return &v }

func invalidf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errdefs.ErrInvalidArgument)...)
}

func notImplementedf(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, errdefs.ErrNotImplemented)...)
}
