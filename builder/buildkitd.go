package builder

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	bkclient "github.com/moby/buildkit/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/internal/hostlock"
	"github.com/cornus-dev/cornus/internal/procattr"
)

// Variables that say which buildkitd builds run on.
const (
	// EnvBuildkitAddress is a running buildkitd to use instead of one
	// cornus starts (unix:///path, tcp://host:port).
	EnvBuildkitAddress = "CORNUS_BUILDKIT_ADDRESS"
	// EnvBuildkitd is the buildkitd binary cornus starts (default:
	// buildkitd on PATH; scripts/buildkit.sh builds it).
	EnvBuildkitd = "CORNUS_BUILDKITD"
	// EnvDataDir holds each buildkitd's root: <dir>/buildkit/<worker>.
	EnvDataDir = "CORNUS_DATA_DIR"
	// EnvBuildWorker picks buildkitd's worker on the containerd backend:
	// "containerd" (its store, the default) or "oci" (buildkitd's own,
	// results loaded into containerd).
	EnvBuildWorker = "CORNUS_BUILD_WORKER"
	// EnvBuildkitSubnetBase is the /16 the bridges of buildkitd's RUN
	// steps take their /24 from.
	EnvBuildkitSubnetBase = "CORNUS_BUILDKIT_SUBNET_BASE"
)

// Supervision bounds.
const (
	buildkitdReady = 30 * time.Second
	buildkitdGrace = 10 * time.Second
)

// worker is how a buildkitd builds: its OCI worker (runc, its own store)
// or its containerd worker on a containerd's store.
type worker struct {
	kind string   // "oci" or "containerd": its section of buildkitd.toml
	key  string   // names the root, the bridge and the lock
	args []string // the worker's flags
}

// ociWorker is the OCI worker for one backend's builds: RUN steps get a
// network namespace of their own on a bridge (never the host's network
// by default: buildkitd's "auto" would pick the host's).
func ociWorker(backend string) worker {
	return worker{kind: "oci", key: "oci-" + backend, args: []string{"--oci-worker=true", "--containerd-worker=false", "--oci-worker-binary=runc"}}
}

// containerdWorker builds on a containerd, storing images in its
// namespace, unpacked for its snapshotter.
func containerdWorker(c backends.ContainerdSite) worker {
	h := fnv.New32a()
	h.Write([]byte(c.Address + "\x00" + c.Namespace))
	args := []string{"--oci-worker=false", "--containerd-worker=true",
		"--containerd-worker-addr=" + c.Address, "--containerd-worker-namespace=" + c.Namespace}
	if c.Snapshotter != "" {
		args = append(args, "--containerd-worker-snapshotter="+c.Snapshotter)
	}
	return worker{kind: "containerd", key: fmt.Sprintf("containerd-%s-%08x", c.Namespace, h.Sum32()), args: args}
}

// buildkitd is a buildkitd cornus runs for its builds: on a socket and a
// root of its own per worker, while this process holds that root's lock
// (another cornus building with the same worker waits), stopped by close
// and, should this process die, by the parent-death signal.
type buildkitd struct {
	sock, root, log string
	cmd             *exec.Cmd
	exited          chan struct{}
	unlock          func()
	once            sync.Once
}

// startBuildkitd starts a buildkitd for w and waits until it answers.
func startBuildkitd(ctx context.Context, environ []string, w worker) (*buildkitd, error) {
	bin, err := exec.LookPath(cmp.Or(envlist.Get(environ, EnvBuildkitd), "buildkitd"))
	if err != nil {
		return nil, fmt.Errorf("builds on this backend run on buildkitd, which cannot be found (%v): run scripts/buildkit.sh, set %s to the binary, or %s to a running buildkitd: %w",
			err, EnvBuildkitd, EnvBuildkitAddress, errdefs.ErrUnavailable)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("cornus starts buildkitd as root only (its OCI worker runs runc and makes bridges); run a rootless buildkitd yourself and set %s: %w", EnvBuildkitAddress, errdefs.ErrUnavailable)
	}
	root := filepath.Join(cmp.Or(envlist.Get(environ, EnvDataDir), "/var/lib/cornus"), "buildkit", w.key)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("buildkitd root: %w", err)
	}
	unlock, err := hostlock.Lock(ctx, root, "cornus", nil)
	if err != nil {
		return nil, fmt.Errorf("buildkitd root %s is in use by another cornus: %w", root, err)
	}
	d := &buildkitd{sock: filepath.Join(root, "buildkitd.sock"), root: root, log: filepath.Join(root, "buildkitd.log"), unlock: unlock, exited: make(chan struct{})}
	args, err := d.args(environ, w)
	if err == nil {
		err = d.spawn(bin, args)
	}
	if err == nil {
		err = d.awaitReady(ctx)
	}
	if err != nil {
		_ = d.close()
		return nil, err
	}
	return d, nil
}

func (d *buildkitd) args(environ []string, w worker) ([]string, error) {
	// One bridge per root: two roots (two data directories, as tests
	// have) may run at once.
	bridge := bridgeName(d.root)
	subnet, err := bridgeSubnet(envlist.Get(environ, EnvBuildkitSubnetBase), bridge)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(d.root, "buildkitd.toml")
	toml := fmt.Sprintf("[worker.%s]\n  networkMode = \"bridge\"\n  cniBinaryPath = %q\n  bridgeName = %q\n  bridgeSubnet = %q\n  gc = true\n",
		w.kind, cniDir(environ), bridge, subnet)
	if err := os.WriteFile(config, []byte(toml), 0o600); err != nil {
		return nil, err
	}
	// The host policy decides which build may ask for an entitlement
	// (checked before every solve); buildkitd's socket is this root's.
	return append([]string{"--addr", "unix://" + d.sock, "--root", d.root, "--config", config,
		"--allow-insecure-entitlement=network.host", "--allow-insecure-entitlement=security.insecure"}, w.args...), nil
}

func (d *buildkitd) spawn(bin string, args []string) error {
	_ = os.Remove(d.sock)
	logf, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group (a terminal's ^C reaches cornus, which stops
	// it in order); SIGTERM should cornus die first.
	cmd.SysProcAttr = procattr.Daemon()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start buildkitd: %w", err)
	}
	d.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(d.exited)
	}()
	return nil
}

// awaitReady polls the socket until buildkitd lists its workers.
func (d *buildkitd) awaitReady(ctx context.Context) error {
	deadline := time.After(buildkitdReady)
	for {
		c, err := bkclient.New(ctx, "unix://"+d.sock)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = c.ListWorkers(pctx)
			cancel()
			_ = c.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-d.exited:
			return fmt.Errorf("buildkitd exited before answering (see %s): %w", d.log, errdefs.ErrUnavailable)
		case <-deadline:
			return fmt.Errorf("buildkitd did not answer on %s within %v (see %s): %w", d.sock, buildkitdReady, d.log, errdefs.ErrUnavailable)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *buildkitd) address() string { return "unix://" + d.sock }

// close stops buildkitd (SIGTERM, then SIGKILL after a grace period) and
// releases its root.
func (d *buildkitd) close() error {
	var err error
	d.once.Do(func() {
		if d.cmd != nil {
			_ = procattr.Terminate(d.cmd.Process)
			select {
			case <-d.exited:
			case <-time.After(buildkitdGrace):
				_ = procattr.KillGroup(d.cmd.Process.Pid)
				<-d.exited
				err = fmt.Errorf("buildkitd did not stop within %v; killed", buildkitdGrace)
			}
		}
		d.unlock()
	})
	return err
}

// bridgeName is the bridge of a root's RUN steps (at most 15 bytes).
func bridgeName(root string) string {
	h := fnv.New32a()
	h.Write([]byte(root))
	return fmt.Sprintf("cnbk%08x", h.Sum32())
}

// bridgeSubnet is the /24 of bridge: the one it has if it exists (left by
// a buildkitd that did not stop cleanly), else one from base (default
// 10.214.0.0/16), starting at one the bridge's name picks, passing over
// any that an address of this host is in (another bridge, the uplink).
func bridgeSubnet(base, bridge string) (string, error) {
	if ifc, err := net.InterfaceByName(bridge); err == nil {
		if addrs, err := ifc.Addrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
					p, _ := netip.ParsePrefix(n.String())
					return p.Masked().String(), nil
				}
			}
		}
	}
	p, err := netip.ParsePrefix(cmp.Or(base, "10.214.0.0/16"))
	if err != nil || !p.Addr().Is4() || p.Bits() > 16 {
		return "", fmt.Errorf("%s=%q: want an IPv4 /16 such as 10.214.0.0/16: %w", EnvBuildkitSubnetBase, base, errdefs.ErrInvalidArgument)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	h := fnv.New32a()
	h.Write([]byte(bridge))
	a := p.Masked().Addr().As4()
	for i := range 256 {
		a[2] = byte((h.Sum32() + uint32(i)) % 254)
		cand := netip.PrefixFrom(netip.AddrFrom4(a), 24)
		if !hostHas(addrs, cand) {
			return cand.String(), nil
		}
	}
	return "", fmt.Errorf("no /24 of %s is free for buildkitd's bridge: set %s: %w", p, EnvBuildkitSubnetBase, errdefs.ErrResourceExhausted)
}

func hostHas(addrs []net.Addr, p netip.Prefix) bool {
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && p.Contains(ip.Unmap()) {
				return true
			}
		}
	}
	return false
}

// cniDir is where the CNI plugins are (the bridge network's).
func cniDir(environ []string) string {
	for _, d := range filepath.SplitList(cmp.Or(envlist.Get(environ, "CNI_PATH"), "/opt/cni/bin:/usr/lib/cni")) {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			return d
		}
	}
	return "/usr/lib/cni"
}
