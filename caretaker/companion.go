package caretaker

import (
	"context"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// Companions gives replicas a caretaker companion, for the engine: those
// whose egress needs one (proxy and transparent modes) and, in remote
// mode, every replica (mount, portforward and agent roles).
type Companions struct {
	Backend backends.Backend
	Environ []string
	// Server is the URL companions dial back to; empty for a local
	// deployment (relayed routes are then refused by the caretaker).
	Server string
	// ServerCA is the PEM of the server's CA, if companions need it.
	ServerCA string
	// Remote is the backend's remote mode (backends.RemoteModer, e.g.
	// CORNUS_DOCKER_REMOTE=1): the server shares neither the runtime's
	// mounts nor its networks, so companions mount client-local mounts and
	// dial port-forwards next to the app.
	Remote bool
	// MountsOnly: in remote mode only replicas with client-local mounts or
	// credentials get a companion, which neither dials nor serves agents
	// (backends.RemoteMountsOnly: the server reaches the workloads).
	MountsOnly bool
	// Sibling: in remote mode the companion runs beside its app, dialing
	// it by address (backends.SiblingCompanions); it serves the
	// portforward, agent and docker roles only.
	Sibling bool

	once  sync.Once
	image string
	err   error
}

type tokenKey struct{}

// WithToken carries the caretaker token of the deployment being applied
// (the server mints one per up) to the companions it creates.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// ReadyCommand is what the engine runs in a companion until it exits 0.
var ReadyCommand = []string{AgentBinary, "caretaker", "ready"}

// Attach implements engine.Companions.
func (c *Companions) Attach(ctx context.Context, p spec.Project, a spec.App, replica int) (engine.Attachment, bool, error) {
	mounts, err := AppMounts(a)
	if err != nil {
		return engine.Attachment{}, false, err
	}
	remote := c.Remote && c.Server != ""
	if len(mounts) > 0 && !remote {
		return engine.Attachment{}, false, fmt.Errorf("services.%s: client-local mounts through a caretaker need a cornus server in remote mode with an advertised URL", a.Name)
	}
	if len(a.Credentials) > 0 && !remote {
		return engine.Attachment{}, false, fmt.Errorf("services.%s.credentials: the client mints them and a caretaker delivers them: they need a cornus server in remote mode with an advertised URL: %w", a.Name, errdefs.ErrFailedPrecondition)
	}
	if remote && c.Sibling {
		if err := refuseBeside(c.Backend.Name(), a, mounts); err != nil {
			return engine.Attachment{}, false, err
		}
	}
	if a.Docker && !remote {
		return engine.Attachment{}, false, fmt.Errorf("services.%s.docker: a caretaker serves the docker endpoint through a cornus server: it needs the server's remote mode with an advertised URL: %w", a.Name, errdefs.ErrFailedPrecondition)
	}
	needEgress := NeedsCompanion(a)
	if _, gap := c.Backend.Capabilities().Gap("egress"); gap {
		needEgress = false // a declared gap, warned: the app runs without
	}
	transparent := needEgress && a.Egress.Mode == spec.EgressTransparent
	if transparent {
		if err := refuseBypass(a); err != nil {
			return engine.Attachment{}, false, err
		}
	}
	if c.MountsOnly && len(mounts) == 0 && len(a.Credentials) == 0 && !a.Docker {
		remote = false // nothing for its companion to do
	}
	if !needEgress && !remote {
		return engine.Attachment{}, false, nil
	}
	wrapper, argv, err := c.envWrapper(ctx, a)
	if err != nil {
		return engine.Attachment{}, false, err
	}
	c.once.Do(func() { c.image, c.err = EnsureAgentImage(ctx, c.Backend, c.Environ) })
	if c.err != nil {
		return engine.Attachment{}, false, fmt.Errorf("services.%s needs the caretaker companion (%s): %w", a.Name, c.why(a), c.err)
	}
	cfg := Config{Project: p.Name, Service: a.Name, Replica: replica, Server: c.Server, ServerCA: c.ServerCA, Remote: remote && !c.MountsOnly,
		Sibling: remote && c.Sibling}
	if needEgress {
		cfg.Egress = a.Egress
	}
	env := map[string]string{}
	if tok, _ := ctx.Value(tokenKey{}).(string); tok != "" && c.Server != "" {
		env[EnvToken] = tok
	}
	// No privilege but what its roles need (added below): no capability,
	// a read-only root (it writes only to what it shares with the app),
	// no gain through exec.
	comp := spec.App{
		Name: a.Name + engine.CompanionSuffix, Image: c.image, PullPolicy: "never", Restart: a.Restart, Env: env,
		Labels: map[string]string{}, StopSignal: "SIGTERM",
		CapDrop: []string{"ALL"}, ReadOnly: true, SecurityOpt: []string{"no-new-privileges:true"},
	}
	att := engine.Attachment{Companion: comp, Ready: ReadyCommand, AppEntrypoint: wrapper, AppCommand: argv}
	if transparent {
		// Its redirect and its marked sockets, in the namespace it owns;
		// the app may neither mark its sockets (SO_MARK: CAP_NET_ADMIN,
		// or CAP_NET_RAW since Linux 5.17) nor send raw packets past the
		// redirect, nor remove it.
		att.Companion.CapAdd = []string{"NET_ADMIN"}
		att.AppCapDrop = []string{"NET_ADMIN", "NET_RAW"}
	}
	if a.Egress != nil && a.Egress.Mode == spec.EgressProxy {
		att.AppEnv = ProxyEnv()
	}
	if remote {
		if att, err = c.share(ctx, p, a, replica, att, mounts, &cfg); err != nil {
			return engine.Attachment{}, false, err
		}
	}
	att.Companion.Env[EnvConfig] = cfg.Encode()
	return att, true, nil
}

// why names what the companion is for, for errors.
func (c *Companions) why(a spec.App) string {
	if NeedsCompanion(a) {
		return "egress mode " + a.Egress.Mode
	}
	return "remote mode"
}

// share gives the companion and its app the volume they share: the
// companion binds it rshared and mounts each client-local mount below
// it (the mount propagates to the runtime's host), the app binds each
// mount rslave (so it sees the live mount, and a remount) and the agent
// socket directory.
func (c *Companions) share(ctx context.Context, p spec.Project, a spec.App, replica int, att engine.Attachment, mounts []AppMount, cfg *Config) (engine.Attachment, error) {
	if c.Backend.Capabilities().Sidecars {
		return c.shareSidecar(a, att, mounts, cfg)
	}
	v, err := c.sharedVolume(ctx, p, a, replica)
	if err != nil {
		return att, err
	}
	att.Volumes = []string{v.Name}
	att.Companion.Mounts = []spec.Mount{{Source: v.Mountpoint, Target: SharedDir, Propagation: "rshared"}}
	if c.Sibling {
		// Its sockets only: nothing it mounts could reach the app.
		att.Sibling, att.Companion.Mounts[0].Propagation = true, ""
	}
	if !c.MountsOnly { // the agent role's sockets
		att.AppMounts = []spec.Mount{{Source: path.Join(v.Mountpoint, agentSubdir), Target: AgentDir, ReadOnly: true}}
	}
	seen := map[int]bool{}
	for _, m := range mounts {
		// A single file is bound from its pin, never from its path in the
		// mount: the runtime would resolve that on its host, following a
		// symlink the client made of the file (package mount/pin).
		src := path.Join(v.Mountpoint, mountsSubdir, strconv.Itoa(m.Index))
		if m.File != "" {
			src = path.Join(v.Mountpoint, pinnedFile(m.Index, m.File))
		}
		att.AppMounts = append(att.AppMounts, spec.Mount{Source: src, Target: m.Target, ReadOnly: m.ReadOnly, Propagation: "rslave"})
		if !seen[m.Index] {
			seen[m.Index] = true
			cfg.Mounts = append(cfg.Mounts, Mount{Index: m.Index, ReadOnly: m.ReadOnly, File: m.File})
		}
	}
	if len(cfg.Mounts) > 0 {
		// FUSE (or kernel 9p) in the companion: the device and the right
		// to mount (mountPrivileges). A /tmp for fusectl, mounted
		// privately to abort a connection.
		att.Companion.Devices = []spec.Device{{Source: "/dev/fuse", Target: "/dev/fuse", Permissions: "rwm"}}
		mountPrivileges(&att)
		att.Companion.Tmpfs = []spec.Tmpfs{{Target: "/tmp", Size: 1 << 20}}
	}
	home := credentialsMounted
	if c.Sibling {
		home = credentialsInVolume
	}
	attachCredentials(a, &att, cfg, v.Mountpoint, home)
	attachDocker(a, &att, cfg, v.Mountpoint, false)
	return att, nil
}

// shareSidecar is share where the backend runs the companion as its app's
// sidecar (a pod's native sidecar): the two share empty directories
// instead of a volume. One per client-local mount, where the companion
// mounts the export (its mount propagates, bidirectionally, to the app's
// host-to-container mount of the same directory), and one for the agent
// sockets. A directory, not a file, is what a pod shares: a single-file
// source is refused.
func (c *Companions) shareSidecar(a spec.App, att engine.Attachment, mounts []AppMount, cfg *Config) (engine.Attachment, error) {
	att.Shared = []backends.SharedDir{{Name: "cornus-agent", SidecarTarget: sharedPath(agentSubdir), Target: AgentDir, ReadOnly: true}}
	seen := map[int]bool{}
	for _, m := range mounts {
		if m.File != "" {
			return att, fmt.Errorf("services.%s: client-local mount of the single file %q at %s: on the %s backend the caretaker sidecar shares directories only (an emptyDir per mount); mount the directory that holds it instead: %w",
				a.Name, m.File, m.Target, c.Backend.Name(), errdefs.ErrNotImplemented)
		}
		att.Shared = append(att.Shared, backends.SharedDir{Name: "cornus-mount-" + strconv.Itoa(m.Index),
			SidecarTarget: sharedPath(mountsSubdir, strconv.Itoa(m.Index)), Target: m.Target, ReadOnly: m.ReadOnly, Propagate: true})
		if !seen[m.Index] {
			seen[m.Index] = true
			cfg.Mounts = append(cfg.Mounts, Mount{Index: m.Index, ReadOnly: m.ReadOnly})
		}
	}
	if len(cfg.Mounts) > 0 {
		// Kubernetes allows Bidirectional propagation to privileged
		// containers only (no capability short of it will do), so the
		// sidecar is privileged where it mounts, and only there. That
		// gives it /dev/fuse, every capability and a writable /sys; it
		// refuses no-new-privileges alongside, and a sidecar has no
		// tmpfs (fusectl's /tmp): the root stays writable.
		att.Companion.Privileged = true
		att.Companion.CapAdd, att.Companion.CapDrop, att.Companion.SecurityOpt = nil, nil, nil
		att.Companion.ReadOnly = false
	}
	attachCredentials(a, &att, cfg, "", credentialsInSidecar)
	attachDocker(a, &att, cfg, "", true)
	return att, nil
}

// refuseBypass refuses what would take a transparent-mode app past its
// redirect: CAP_NET_RAW (SO_MARK since Linux 5.17, raw and packet sockets)
// and CAP_NET_ADMIN (SO_MARK, and the redirect's table itself), asked for
// or with privileged. The companion drops both from the app otherwise.
// Refused, not warned: an app holding them runs with the policy on paper
// only. Proxy mode, which the app follows of its own accord, has no such
// limit.
func refuseBypass(a spec.App) error {
	const why = "would let the app mark its sockets as the caretaker's (SO_MARK), send raw packets or remove the redirect, past the egress policy"
	if a.Privileged {
		return fmt.Errorf("services.%s.privileged: a privileged app in egress mode transparent holds CAP_NET_RAW and CAP_NET_ADMIN, which %s: drop privileged, or use egress mode proxy: %w",
			a.Name, why, errdefs.ErrInvalidArgument)
	}
	for i, c := range a.CapAdd {
		switch n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_"); n {
		case "ALL", "NET_RAW", "NET_ADMIN":
			return fmt.Errorf("services.%s.capAdd[%d]: %s in egress mode transparent %s: remove it, or use egress mode proxy: %w",
				a.Name, i, c, why, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

// Ready reports whether the caretaker of this network namespace is ready.
func Ready() error {
	c, err := net.DialTimeout("unix", ReadySocket, 5*time.Second)
	if err != nil {
		return fmt.Errorf("caretaker not ready")
	}
	return c.Close()
}
