package daemonless

import (
	"context"
	"fmt"
	"os"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/journal"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// Core is a daemonless backend less its runtime: it implements the
// backend verbs and optional features that do not depend on the runtime
// (networks, volumes, events, attach, list and inspect from the records,
// the start/stop/remove state machine through the monitor, pause, top,
// rename, copy) over the backend's Runtime. A backend embeds it.
type Core struct {
	Cfg     Config
	Net     *cni.Manager
	Records *monitor.Store
	rt      Runtime
	vols    *localstore.Volumes
	nets    *localstore.Networks
}

// New makes the core of the backend cfg names over rt, checking the CNI
// plugins (failing with what to install). It does no other I/O: Open
// makes the directories.
func New(cfg Config, rt Runtime) (*Core, error) {
	net, err := cni.New(cfg.DataDir, cni.WithEnv(cfg.Environ))
	if err != nil {
		return nil, fmt.Errorf("%s backend: %w", cfg.Name, err)
	}
	if err := net.Check(); err != nil {
		return nil, fmt.Errorf("%s backend: %w (apt-get install containernetworking-plugins iptables, or set %s)", cfg.Name, err, EnvCNIBinDir)
	}
	c := &Core{Cfg: cfg, Net: net, Records: monitor.NewStore(cfg.RecordsDir()), rt: rt}
	c.nets = localstore.NewNetworks(net, cfg.NetworksDir(), cfg.Name)
	c.vols = localstore.NewVolumes(cfg.VolumesDir(), cfg.Name, c.volumeUser)
	return c, nil
}

// Open makes the core's directories and the runtime's dirs and, unless
// for a monitor, removes what Creates that died half-way left. A monitor
// sweeps nothing: its CLI did, and a monitor starting after its CLI was
// killed would hold a half-made container's lock while it sweeps, so the
// next CLI skipped it and collided with its port or address.
func (c *Core) Open(ctx context.Context, forMonitor bool, dirs ...string) error {
	for _, d := range append([]string{c.Cfg.RecordsDir(), c.Cfg.VolumesDir()}, dirs...) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("%s backend: %w", c.Cfg.Name, err)
		}
	}
	if forMonitor {
		return nil
	}
	if err := c.halfMade().Sweep(ctx, c.removeAbandoned); err != nil {
		return fmt.Errorf("%s backend: %w", c.Cfg.Name, err)
	}
	return nil
}

// Store is the backend's containers: their container.json files and
// their monitor records.
func (c *Core) Store() *records.Store {
	return &records.Store{Dir: c.Cfg.ContainerDir, IDs: c.rt.IDs, Records: c.Records, TaskRunning: c.rt.Running}
}

// Supervise is the body of `cornus monitor <backend> ID` once the
// backend is open: it supervises the container (monitor.Run) and,
// meanwhile (with Cfg.DNS), serves DNS for the container's networks on
// their gateways — whichever monitor of a network binds first serves it;
// the others retry, so one takes over when it goes.
func (c *Core) Supervise(ctx context.Context, id string, task monitor.Task) error {
	if st, err := c.Store().Read(id); err == nil && c.Cfg.DNS {
		dnsCtx, stop := context.WithCancel(ctx)
		defer stop()
		for name := range st.Networks {
			go c.Net.ServeDNS(dnsCtx, name)
		}
	}
	return monitor.Run(ctx, monitor.RunOptions{Store: c.Records, ID: id, Task: task})
}

// Capabilities is a daemonless backend's: its features are the optional
// interfaces b implements (the Core's and its own); the monitor runs
// healthchecks; pulls speak plain HTTP to loopback registries (Resolver);
// logging drivers and update are the gaps.
func Capabilities(b backends.Backend) backends.Capabilities {
	return backends.Capabilities{
		Gaps: map[string]string{
			"logging": "output goes to the monitor's JSON-lines log; no log drivers",
			"update":  backends.GapUpdate,
		},
		Features:           backends.FeaturesOf(b),
		NativeHealthcheck:  true,
		LoopbackRegistries: true,
	}
}

func (c *Core) journal() *journal.Journal { return journal.Open(c.Cfg.EventsDir()) }
