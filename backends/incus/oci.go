package incus

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/distribution/reference"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// The OCI path: Incus >= 6.3 (API extension instance_oci) pulls and runs
// OCI images itself from a registry given as an image server. cornus then
// sees no image config, runs no init of its own in the container, and
// maps the spec onto Incus's oci.* keys. What this path cannot do is in
// ociGaps (warned like every gap); CI proves the 6.0 path (Debian ships
// 6.0), this one is pinned by unit tests against recorded answers.

// ociGaps are the fields the OCI path cannot honor on top of the 6.0
// path's gaps, each with the reason and, where there is one, the
// workaround.
var ociGaps = map[string]string{
	"command.overrideOnly":      "Incus's OCI containers take one oci.entrypoint that replaces the image's entrypoint and command together, and cornus does not see the image's entrypoint to prepend it; set entrypoint as well as command",
	"restart.maxRetries":        "boot.autorestart restarts without a count; on-failure:N keeps no N",
	"healthcheck.startInterval": "the engine's exec prober has one interval",
	"secrets":                   "no cornus init runs in an OCI container to mount them; use a bind mount",
	"configs":                   "no cornus init runs in an OCI container to mount them; use a bind mount",
	"tmpfs":                     "no cornus init runs in an OCI container to mount them",
	"shmSize":                   "no cornus init runs in an OCI container to size /dev/shm",
	"readOnly":                  "no cornus init runs in an OCI container to remount its root",
	"stopSignal":                "Incus stops OCI containers with its own signal",
	"capAdd":                    "Incus gives OCI containers its own capability set",
	"capDrop":                   "Incus gives OCI containers its own capability set",
	"groupAdd":                  "oci.gid takes one group",
	"domainname":                "no cornus init runs in an OCI container to set it",
	"hostname":                  "Incus names the container's host after the instance",
	"securityOpt":               "no cornus init runs in an OCI container to apply it",
	"tty":                       "Incus's OCI containers run without a terminal",
	"stdinOpen":                 "Incus's OCI containers run without stdin",
	"init":                      "Incus's OCI containers run the image's process as pid 1",
	"extraHosts":                "no cornus init runs in an OCI container to bind /etc/hosts",
	"dns":                       "Incus's DHCP client configures the resolver",
	"dnsSearch":                 "Incus's DHCP client configures the resolver",
	"dnsOptions":                "Incus's DHCP client configures the resolver",
	"volumes.subpath":           "no cornus init runs in an OCI container to bind a subpath",
}

// ociSource is the instance source for an image reference: its registry
// as an OCI image server (https, or http for CORNUS_INCUS_INSECURE_REGISTRIES),
// the repository and tag or digest as the alias.
func ociSource(ref string, insecure []string) (instanceSource, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return instanceSource{}, fmt.Errorf("image reference %q: %v: %w", ref, err, errdefs.ErrInvalidArgument)
	}
	n = reference.TagNameOnly(n)
	domain := reference.Domain(n)
	server := "https://" + domain
	if domain == "docker.io" {
		server = "https://registry-1.docker.io"
	}
	if slices.Contains(insecure, domain) {
		server = "http://" + domain
	}
	alias := reference.Path(n)
	if d, ok := n.(reference.Digested); ok {
		alias += "@" + d.Digest().String()
	} else if t, ok := n.(reference.Tagged); ok {
		alias += ":" + t.Tag()
	}
	return instanceSource{Type: "image", Protocol: "oci", Server: server, Alias: alias, Mode: "pull"}, nil
}

// ociInstanceBody maps a plan onto POST /1.0/instances for the OCI path:
// instanceBody's mapping without cornus's init (no record directory, no
// raw.lxc init or static LXC addresses: Incus runs its own DHCP client
// and the NIC's ipv4.address reserves the address), plus the process as
// oci.* keys. It does no I/O.
func ociInstanceBody(p plan, src instanceSource) (instancesPost, error) {
	cs := p.Spec
	body, err := instanceBody(p)
	if err != nil {
		return body, err
	}
	body.Source = src
	cfg := maps.Clone(body.Config)
	delete(cfg, "raw.lxc")
	delete(cfg, keyDir)
	delete(cfg, keyCommand)
	// Only the spec's environment: Incus applies the image's.
	for k := range cfg {
		if strings.HasPrefix(k, "environment.") {
			delete(cfg, k)
		}
	}
	for _, kv := range cs.Env {
		if k, v, _ := strings.Cut(kv, "="); k != "" {
			cfg["environment."+k] = v
		}
	}
	if cs.Entrypoint != nil {
		cfg["oci.entrypoint"] = shellJoin(append(slices.Clone(cs.Entrypoint), cs.Command...))
	}
	if cs.WorkingDir != "" {
		cfg["oci.cwd"] = cs.WorkingDir
	}
	if cs.User != "" {
		uid, gid, err := numericUser(cs.User)
		if err != nil {
			return body, err
		}
		cfg["oci.uid"] = uid
		if gid != "" {
			cfg["oci.gid"] = gid
		}
	}
	switch cs.Restart.Name {
	case spec.RestartAlways, spec.RestartUnlessStopped, spec.RestartOnFailure:
		cfg["boot.autorestart"] = "true"
	}
	body.Config = cfg
	devices := maps.Clone(body.Devices)
	delete(devices, "cornus-bin")
	delete(devices, "cornus-records")
	body.Devices = devices
	return body, checkBodyText(body)
}

// numericUser splits a numeric uid[:gid]; Incus's oci.uid/oci.gid take
// numbers only (cornus cannot read the image's /etc/passwd here).
func numericUser(u string) (string, string, error) {
	uid, gid, _ := strings.Cut(u, ":")
	for _, v := range []string{uid, gid} {
		if v == "" {
			continue
		}
		if _, err := strconv.ParseUint(v, 10, 32); err != nil {
			return "", "", fmt.Errorf("user %q: Incus's OCI containers take a numeric uid[:gid] (oci.uid/oci.gid): %w", u, errdefs.ErrInvalidArgument)
		}
	}
	if uid == "" {
		return "", "", fmt.Errorf("user %q: no uid: %w", u, errdefs.ErrInvalidArgument)
	}
	return uid, gid, nil
}

// shellJoin quotes argv for oci.entrypoint, which Incus splits like a
// shell: words with anything but safe characters go in single quotes.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		safe := a != ""
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)) {
				safe = false
				break
			}
		}
		if safe {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// createOCI creates an instance Incus pulls from the image's registry.
func (b *Backend) createOCI(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	name := instanceName(cs.Name)
	if _, err := b.getInstance(ctx, name); err == nil {
		return backends.Container{}, fmt.Errorf("create container %s: the name is in use (incus instance %s): %w", cs.Name, name, errdefs.ErrConflict)
	}
	src, err := ociSource(cs.Image, b.cfg.insecure)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	p := plan{Spec: cs, ID: newID(), Name: name, ImageID: cs.Image}
	undo := &undoList{}
	defer undo.run()
	if p.Pool, err = b.storagePool(ctx); err != nil {
		return backends.Container{}, err
	}
	var proc procConfig
	if err := b.placeStorage(ctx, cs, &p, &proc, undo); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := b.placeDevices(cs, &p); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	unlock, err := b.lock("addresses")
	if err != nil {
		return backends.Container{}, err
	}
	defer unlock()
	if p.NICs, err = b.planNICs(ctx, cs); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if p.Ports, err = planPorts(cs); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	body, err := ociInstanceBody(p, src)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if err := b.createInstance(ctx, name, body); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: incus (OCI image from %s): %w", cs.Name, src.Server, err)
	}
	undo.clear()
	inst, err := b.getInstance(ctx, name)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	return b.containerOf(inst, false), nil
}

func (b *Backend) startOCI(ctx context.Context, in instance) error {
	if err := b.setState(ctx, in.Name, "start", 0, false); err != nil && !errdefs.IsConflict(err) {
		return fmt.Errorf("start container %s: incus: %w", cmpOr(in.Config[keyName], in.Name), err)
	}
	return nil
}

// stopOCI asks Incus for a clean stop within the grace period (10 s by
// default, as Docker's), then forces it.
func (b *Backend) stopOCI(ctx context.Context, in instance, o backends.StopOptions) error {
	grace := 10
	if o.Timeout != nil {
		grace = max(0, int(o.Timeout.Seconds()))
	}
	if grace > 0 {
		if err := b.setState(ctx, in.Name, "stop", grace, false); err == nil {
			return nil
		}
	}
	return b.forceStop(ctx, in.Name)
}

// killOCI: SIGKILL stops the instance; other signals go to pid 1
// through Incus's exec (kill is in every image with a shell).
func (b *Backend) killOCI(ctx context.Context, in instance, sig spec.Signal) error {
	if sig == spec.SIGKILL {
		return b.forceStop(ctx, in.Name)
	}
	code, err := b.execPlain(ctx, in, helperRequest{Cmd: []string{"kill", "-" + strconv.Itoa(int(sig)), "1"}}, streams{})
	if err != nil {
		return fmt.Errorf("kill container %s: %w", in.Name, err)
	}
	if code != 0 {
		return fmt.Errorf("kill container %s: kill exited %d (the image needs a kill command): %w", in.Name, code, errdefs.ErrFailedPrecondition)
	}
	return nil
}

// waitOCI waits for the instance to stop. Incus keeps no exit code of an
// OCI container's process: 0 is reported.
func (b *Backend) waitOCI(ctx context.Context, in instance) (int, error) {
	return 0, b.waitStopped(ctx, in.Name, 1<<62)
}

// logsOCI copies the console log, which is all Incus keeps of an OCI
// container's output (stdout and stderr together, no timestamps). The
// log drains on each read while the container runs, so cornus appends
// every read to a file of its own and serves that.
func (b *Backend) logsOCI(ctx context.Context, in instance, o backends.LogOptions) error {
	warn := func(flag, why string) {
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, "warning: %s is not supported for Incus OCI containers (%s); ignored\n", flag, why)
		}
	}
	if !o.Since.IsZero() {
		warn("--since", "the console log has no timestamps")
	}
	if !o.Until.IsZero() {
		warn("--until", "the console log has no timestamps")
	}
	if o.Timestamps {
		warn("--timestamps", "the console log has no timestamps")
	}
	if o.Follow {
		warn("--follow", "the console log is read once")
	}
	data, err := b.consoleLog(ctx, in.Name)
	if err != nil {
		return fmt.Errorf("logs of container %s: %w", in.Name, err)
	}
	if o.Tail >= 0 {
		lines := strings.SplitAfter(string(data), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > o.Tail {
			lines = lines[len(lines)-o.Tail:]
		}
		data = []byte(strings.Join(lines, ""))
	}
	if o.Stdout != nil {
		_, err = o.Stdout.Write(data)
	}
	return err
}

// execPlain runs a command through Incus's exec API directly (no cornus
// helper in an OCI container): the environment, a numeric user and the
// working directory are Incus's exec options.
func (b *Backend) execPlain(ctx context.Context, in instance, req helperRequest, s streams) (int, error) {
	post := execPost{Command: req.Cmd, Environment: map[string]string{}, WaitForWebsocket: true, Interactive: s.tty, Cwd: req.WorkingDir}
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			post.Environment[k] = v
		}
	}
	if req.User != "" {
		uid, gid, err := numericUser(req.User)
		if err != nil {
			return -1, err
		}
		u, _ := strconv.ParseUint(uid, 10, 32)
		post.User = uint32(u)
		if gid != "" {
			g, _ := strconv.ParseUint(gid, 10, 32)
			post.Group = uint32(g)
		}
	}
	if s.tty && s.size != nil {
		post.Width, post.Height = int(s.size.Width), int(s.size.Height)
	}
	return b.execOp(ctx, in.Name, post, s)
}
