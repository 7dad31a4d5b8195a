package incus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/spec"
)

var errInvalid = errdefs.ErrInvalidArgument

// Create makes the container as a stopped Incus instance, once the spec
// holds no text that would break a configuration line: its record
// directory on the host (the monitor's record, process.json, secrets and
// configs, hosts and resolv.conf), addresses on its networks, published
// ports, volumes; then the instance, whose init is cornus itself.
// Anything made before a failure is undone.
func (b *Backend) Create(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	if err := checkSpecText(cs); err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	if b.ociMode() {
		return b.createOCI(ctx, cs)
	}
	c, err := b.createLXC(ctx, cs)
	if err != nil {
		return backends.Container{}, fmt.Errorf("create container %s: %w", cs.Name, err)
	}
	return c, nil
}

// createLXC creates a system container whose init is cornus's.
func (b *Backend) createLXC(ctx context.Context, cs backends.ContainerSpec) (backends.Container, error) {
	name := instanceName(cs.Name)
	if _, err := b.getInstance(ctx, name); err == nil {
		return backends.Container{}, fmt.Errorf("the name is in use (incus instance %s): %w", name, errdefs.ErrConflict)
	}
	undo := &undoList{}
	defer undo.run()
	p, err := b.planInstance(ctx, cs, name, undo)
	if err != nil {
		return backends.Container{}, err
	}
	unlock, err := b.lock("addresses")
	if err != nil {
		return backends.Container{}, err
	}
	defer unlock()
	if err := b.planNetwork(ctx, cs, &p); err != nil {
		return backends.Container{}, err
	}
	body, err := instanceBody(p)
	if err != nil {
		return backends.Container{}, err
	}
	if err := b.createInstance(ctx, name, body); err != nil {
		if errdefs.IsConflict(err) && strings.Contains(err.Error(), "ipv4") {
			err = fmt.Errorf("an address was taken meanwhile, try again: %w", err)
		}
		return backends.Container{}, fmt.Errorf("incus: %w", err)
	}
	undo.clear()
	if err := b.syncHosts(ctx, p.NICs); err != nil {
		return backends.Container{}, err
	}
	inst, err := b.getInstance(ctx, name)
	if err != nil {
		return backends.Container{}, err
	}
	b.event("create", inst)
	return b.containerOf(inst, false), nil
}

// planInstance plans the instance from its image and writes what its
// init reads (the process config, the monitor record) into a new record
// directory; undo removes what it made.
func (b *Backend) planInstance(ctx context.Context, cs backends.ContainerSpec, name string, undo *undoList) (plan, error) {
	img, err := b.imageByRef(ctx, cs.Image)
	if err != nil {
		return plan{}, err
	}
	icfg, _ := configOf(img)
	initPath, err := b.initBinary()
	if err != nil {
		return plan{}, err
	}
	p := plan{Spec: cs, ID: newID(), Name: name, Image: img.Fingerprint, ImageID: cmpOr(img.Properties[propID], img.Fingerprint),
		InitPath: ctrBinDir + "/" + initPath, BinDir: b.cfg.binDir(), Shift: !cs.Privileged}
	p.Argv = argv(cs, icfg)
	p.Env = mergeEnv(icfg.Config.Env, cs.Env)
	if p.RecordDir, err = b.records.Dir(name); err != nil {
		return plan{}, err
	}
	if err := os.RemoveAll(p.RecordDir); err != nil {
		return plan{}, err
	}
	if err := os.MkdirAll(p.RecordDir, 0o700); err != nil {
		return plan{}, err
	}
	undo.add(func() { os.RemoveAll(p.RecordDir) })
	if p.Pool, err = b.storagePool(ctx); err != nil {
		return plan{}, err
	}
	proc, err := b.processConfig(cs, icfg, p)
	if err != nil {
		return plan{}, err
	}
	if err := b.placeStorage(ctx, cs, &p, &proc, undo); err != nil {
		return plan{}, err
	}
	if err := b.placeDevices(cs, &p); err != nil {
		return plan{}, err
	}
	if err := writeProcConfig(p.RecordDir, proc); err != nil {
		return plan{}, err
	}
	return p, b.records.Write(monitorRecord(name, cs, icfg))
}

// planNetwork gives the instance its addresses, forwarding on their
// bridges, its published ports and resolv.conf. The caller holds the
// addresses lock.
func (b *Backend) planNetwork(ctx context.Context, cs backends.ContainerSpec, p *plan) error {
	var err error
	if p.NICs, err = b.planNICs(ctx, cs); err != nil {
		return err
	}
	for _, n := range p.NICs {
		if err := ensureForward(ctx, forwardIface(n.Bridge)); err != nil {
			return err
		}
	}
	if p.Ports, err = planPorts(cs); err != nil {
		return err
	}
	return writeResolvConf(p.RecordDir, cs, p.NICs)
}

// createInstance creates instance name from body and waits for it. When
// Incus dropped the finished operation before the wait, the outcome is the
// instance's existence.
func (b *Backend) createInstance(ctx context.Context, name string, body any) error {
	err := b.cli.call(ctx, request{method: "POST", path: "/1.0/instances", body: body}, nil)
	if !errors.Is(err, errOperationDropped) {
		return err
	}
	if _, gerr := b.getInstance(ctx, name); gerr != nil {
		return fmt.Errorf("%w; the instance is not there: %w", err, gerr)
	}
	return nil
}

// argv is the main process: Docker's rule for entrypoint and command over
// the image's (a new entrypoint drops the image's command).
func argv(cs backends.ContainerSpec, icfg imageConfig) []string {
	entry, cmd := icfg.Config.Entrypoint, icfg.Config.Cmd
	if cs.Entrypoint != nil {
		entry, cmd = cs.Entrypoint, nil
	}
	if cs.Command != nil {
		cmd = cs.Command
	}
	return append(slices.Clone(entry), cmd...)
}

// processConfig is process.json for the container, less the storage
// binds placeStorage adds.
func (b *Backend) processConfig(cs backends.ContainerSpec, icfg imageConfig, p plan) (procConfig, error) {
	proc := procConfig{
		Args: p.Argv, Env: p.Env, User: cmpOr(cs.User, icfg.Config.User), WorkingDir: cmpOr(cs.WorkingDir, icfg.Config.WorkingDir),
		GroupAdd: cs.GroupAdd, TTY: cs.TTY, Domainname: cs.Domainname, ShmSize: cs.ShmSize, ReadOnly: cs.ReadOnly,
	}
	for _, u := range cs.Ulimits {
		if u.Name == "nofile" {
			proc.Nofile = &[2]int64{u.Soft, u.Hard}
		}
	}
	for _, t := range cs.Tmpfs {
		proc.Tmpfs = append(proc.Tmpfs, tmpfsMount{Target: t.Target, Size: t.Size, Mode: t.Mode})
	}
	if err := securityOpts(cs.Security, &proc); err != nil {
		return proc, err
	}
	if !cs.Privileged {
		caps, err := capSet(cs.CapAdd, cs.CapDrop)
		if err != nil {
			return proc, err
		}
		proc.Caps = caps
	}
	// Files the container sees through its record directory.
	ctrDir := ctrRecords + "/" + p.Name
	if err := os.MkdirAll(filepath.Join(p.RecordDir, "files"), 0o755); err != nil {
		return proc, err
	}
	for i, f := range cs.Files {
		name := fmt.Sprintf("files/%d", i)
		host := filepath.Join(p.RecordDir, name)
		mode := f.Mode
		if mode == 0 {
			mode = 0o444
		}
		if err := os.WriteFile(host, f.Content, 0o600); err != nil {
			return proc, err
		}
		if err := os.Chmod(host, os.FileMode(mode)&0o7777); err != nil {
			return proc, err
		}
		if err := os.Chown(host, f.UID, f.GID); err != nil {
			return proc, err
		}
		proc.Binds = append(proc.Binds, bindMount{Source: ctrDir + "/" + name, Target: f.Target, ReadOnly: true, File: true})
	}
	for _, n := range []string{"hosts", "resolv.conf"} {
		if err := os.WriteFile(filepath.Join(p.RecordDir, n), nil, 0o644); err != nil {
			return proc, err
		}
		proc.Binds = append(proc.Binds, bindMount{Source: ctrDir + "/" + n, Target: "/etc/" + n, File: true})
	}
	return proc, nil
}

// securityOpts applies the security options an Incus container honors:
// no-new-privileges (the init's exec helper sets it) and seccomp=unconfined
// (raw.lxc drops the profile). AppArmor, SELinux labels, system paths and
// cgroups are Incus's own (its AppArmor profile, no SELinux, lxcfs), so
// those options are accepted and change nothing. The rest (podman's mask
// and unmask, a custom seccomp profile) is refused, not ignored.
func securityOpts(sec backends.Security, proc *procConfig) error {
	proc.NoNewPrivs = sec.NoNewPrivileges
	if sec.Seccomp != "" && sec.Seccomp != "unconfined" {
		return fmt.Errorf("securityOpt seccomp=%s: the incus backend runs Incus's seccomp profile or none (seccomp=unconfined), not a profile of the spec's: %w", sec.Seccomp, errdefs.ErrNotImplemented)
	}
	if len(sec.Mask)+len(sec.Unmask) > 0 {
		return fmt.Errorf("securityOpt mask and unmask are podman's: the incus backend has neither: %w", errdefs.ErrNotImplemented)
	}
	return nil
}

// monitorRecord is the record the container's init starts from.
func monitorRecord(name string, cs backends.ContainerSpec, icfg imageConfig) monitor.Record {
	sup := monitor.Supervision{
		Restart:   cs.Restart,
		StopGrace: cs.StopTimeout, OpenStdin: cs.StdinOpen, StdinOnce: cs.StdinOnce, TTY: cs.TTY,
	}
	if sup.Restart.Name == "" {
		sup.Restart.Name = spec.RestartNo
	}
	sup.StopSignal = syscall.Signal(cs.StopSignal)
	if n, ok := spec.ParseSignal(icfg.Config.StopSignal); ok && cs.StopSignal == 0 {
		sup.StopSignal = syscall.Signal(n)
	}
	sup.Healthcheck = healthcheckOf(cs.Healthcheck, icfg)
	rec := monitor.Record{ID: name, Name: cs.Name, Image: cs.Image, Labels: cs.Labels, Supervision: sup,
		State: monitor.State{Status: monitor.StatusCreated}, Desired: monitor.DesiredRunning}
	rec.Supervision.Events = ctrEventsDir(name)
	return rec
}

// healthcheckOf is the spec's healthcheck, else the image's.
func healthcheckOf(h *backends.Healthcheck, icfg imageConfig) *monitor.Healthcheck {
	if h != nil {
		if h.Disabled || len(h.Test) == 0 {
			return nil
		}
		return &monitor.Healthcheck{Test: h.Test, Interval: h.Interval, Timeout: h.Timeout, StartPeriod: h.StartPeriod,
			StartInterval: h.StartInterval, Retries: h.Retries}
	}
	ih := icfg.Config.Healthcheck
	if ih == nil || len(ih.Test) == 0 || ih.Test[0] == "NONE" {
		return nil
	}
	return &monitor.Healthcheck{Test: ih.Test, Interval: ih.Interval, Timeout: ih.Timeout, StartPeriod: ih.StartPeriod,
		StartInterval: ih.StartInterval, Retries: ih.Retries}
}

// placeDevices maps host devices onto unix-char/unix-block devices.
func (b *Backend) placeDevices(cs backends.ContainerSpec, p *plan) error {
	for i, d := range cs.Devices {
		var st syscall.Stat_t
		if err := syscall.Stat(d.Source, &st); err != nil {
			return fmt.Errorf("devices[%d]: %s: %w", i, d.Source, err)
		}
		typ := "unix-char"
		if st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
			typ = "unix-block"
		} else if st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
			return fmt.Errorf("devices[%d]: %s is not a device: %w", i, d.Source, errInvalid)
		}
		p.Devices = append(p.Devices, devicePlan{Type: typ, Source: d.Source, Path: cmpOr(d.Target, d.Source)})
	}
	return nil
}

// undoList runs its steps in reverse unless cleared.
type undoList struct{ steps []func() }

func (u *undoList) add(f func()) { u.steps = append(u.steps, f) }
func (u *undoList) clear()       { u.steps = nil }
func (u *undoList) run() {
	for i := len(u.steps) - 1; i >= 0; i-- {
		u.steps[i]()
	}
}

// newID is a container ID: 64 random hex digits, as Docker's. A
// recreated container keeps its instance name but gets a new ID.
func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// randomSuffix is 8 random hex digits.
func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// lock takes a host-wide file lock named name under the data dir (other
// cornus processes allocate addresses and networks too).
func (b *Backend) lock(name string) (func(), error) {
	b.ensureMu.Lock()
	if err := os.MkdirAll(b.cfg.lockDir(), 0o700); err != nil {
		b.ensureMu.Unlock()
		return nil, fmt.Errorf("incus lock %s: %w", name, err)
	}
	f, err := os.OpenFile(filepath.Join(b.cfg.lockDir(), name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.ensureMu.Unlock()
		return nil, fmt.Errorf("incus lock %s: %w", name, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.Close()
		b.ensureMu.Unlock()
		return nil, fmt.Errorf("incus lock %s: %w", name, err)
	}
	return func() { f.Close(); b.ensureMu.Unlock() }, nil
}

// forwardIface is the interface pattern the FORWARD rules match for a
// bridge: every cornus bridge at once, or another Incus network by name.
func forwardIface(bridge string) string {
	if strings.HasPrefix(bridge, bridgePrefix) {
		return bridgePrefix + "+"
	}
	return bridge
}
