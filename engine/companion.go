package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// Labels of companion containers and of the replicas they serve.
const (
	// LabelCompanionOf marks a companion with the container name of the
	// replica it serves.
	LabelCompanionOf = "cornus.companion-of"
	// LabelHasCompanion marks a replica that has one (removing it removes
	// the companion).
	LabelHasCompanion = "cornus.companion"
	// LabelCompanionVolumes lists (comma-separated) the volumes a
	// companion shares with its app, removed after it.
	LabelCompanionVolumes = "cornus.companion-volumes"
)

// CompanionSuffix ends a companion's name: its replica's container name
// and this.
const CompanionSuffix = "-caretaker"

// Attachment is a replica's companion: a container that owns the replica's
// network namespace (the app joins it), created and ready before the app
// starts.
type Attachment struct {
	// Companion is the companion's app; the engine moves the replica's
	// network settings (networks, ports, hostname, DNS, extra hosts,
	// net.* sysctls) onto it.
	Companion spec.App
	// Ready is a command run in the companion until it exits 0.
	Ready []string
	// AppEnv is set in the app, where it does not set those variables
	// itself.
	AppEnv map[string]string
	// AppCapDrop are capabilities the app must not have (the companion's
	// enforcement would not hold): added to its capDrop.
	AppCapDrop []string
	// AppMounts are added to the app's binds (what the companion shares
	// with it); they are the companion's, not the user's, so the host
	// policy, which checked the user's spec, does not see them.
	AppMounts []spec.Mount
	// AppEntrypoint, where set, replaces the app's entrypoint and
	// AppCommand its command: a wrapper a role runs as the app starts (to
	// set the credentials it delivers as environment), then the app's own.
	AppEntrypoint []string
	AppCommand    []string
	// Volumes were made for the companion and its app: removed after the
	// companion (and when creating the replica fails).
	Volumes []string
	// AppLoopback are ports on the app's loopback passed to a unix socket
	// the companion serves on the runtime's host, where it runs beside
	// the app (Sibling): the app's loopback is not its own.
	AppLoopback []backends.LoopbackSocket
	// Shared are the directories the companion shares with its app where
	// the backend runs it as the app's sidecar (Capabilities.Sidecars):
	// there it has no volumes of its own.
	Shared []backends.SharedDir
	// Sibling: the companion runs beside the app, on the app's networks,
	// instead of owning the namespace the app joins (a runtime whose
	// containers cannot share one: backends.SiblingCompanions).
	Sibling bool
}

// Companions decides which replicas get a companion (the caretaker).
type Companions interface {
	Attach(ctx context.Context, p spec.Project, a spec.App, replica int) (Attachment, bool, error)
}

// WithCompanions makes the engine give replicas their companions.
func WithCompanions(c Companions) Option { return func(cf *config) { cf.companions = c } }

// companionReady bounds the wait for a companion's Ready command.
const companionReady = 30 * time.Second

// joined is a replica's app as its companion leaves it.
type joined struct {
	app     spec.App
	sidecar *backends.Sidecar // the companion, where the backend runs it in one unit with the app
	netns   string            // the companion container whose network namespace the app joins
	// loopback: the app's loopback ports its companion beside it serves.
	loopback []backends.LoopbackSocket
	undo     func() // removes the companion
}

// attach creates and starts replica's companion, if it gets one, and
// returns the app joined to it. Where the backend runs companions as
// sidecars (Capabilities.Sidecars), nothing is created here: the
// companion is returned, resolved, for the app's Create.
func (e *Engine) attach(ctx context.Context, p spec.Project, a spec.App, replica int, hash string) (joined, error) {
	none := joined{app: a, undo: func() {}}
	if e.companions == nil {
		return none, nil
	}
	att, ok, err := e.companions.Attach(ctx, p, a, replica)
	if err != nil || !ok {
		return none, err
	}
	if a.NetworkMode != "" && a.NetworkMode != "bridge" {
		return none, fmt.Errorf("services.%s: network_mode %q: its caretaker companion (egress proxy or transparent mode, or the server's remote mode) needs the service's own network namespace, which it owns", a.Name, a.NetworkMode)
	}
	if e.b.Capabilities().Sidecars {
		return e.sidecar(ctx, p, a, replica, hash, att)
	}
	return e.companion(ctx, p, a, replica, hash, att)
}

// companion creates and starts the companion att describes as a container
// of its own, owning the network namespace the app joins.
func (e *Engine) companion(ctx context.Context, p spec.Project, a spec.App, replica int, hash string, att Attachment) (joined, error) {
	none := joined{app: a, undo: func() {}}
	appName := containerName(p.Name, a, replica)
	comp, app := splitNetns(att.Companion, a)
	if att.Sibling {
		comp, app = besideApp(att.Companion, a), a
	}
	name := appName + CompanionSuffix
	labels := containerLabels(p, comp, replica, hash)
	labels[LabelCompanionOf] = appName
	if len(att.Volumes) > 0 {
		labels[LabelCompanionVolumes] = strings.Join(att.Volumes, ",")
	}
	dropVolumes := func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = e.removeVolumeList(rmCtx, att.Volumes)
	}
	cs, err := backends.Resolve(backends.ResolveInput{Project: p.Name, App: comp, Replica: replica, Name: name,
		Labels: labels, Networks: p.Networks, Volumes: p.Volumes})
	if err != nil {
		dropVolumes()
		return none, fmt.Errorf("create %s: %w", name, err)
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Creating"})
	c, err := e.b.Create(ctx, cs)
	if err != nil {
		dropVolumes()
		e.failed(ctx, name, err)
		return none, err
	}
	undo := func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		e.stopCompanion(rmCtx, c.ID)
		_ = e.b.Remove(rmCtx, c.ID, backends.RemoveOptions{Force: true})
		_ = e.removeVolumeList(rmCtx, att.Volumes)
	}
	if err := e.b.Start(ctx, c.ID); err != nil {
		undo()
		e.failed(ctx, name, err)
		return none, fmt.Errorf("start %s: %w", name, err)
	}
	if err := e.waitCompanion(ctx, c.ID, name, att.Ready); err != nil {
		undo()
		e.failed(ctx, name, err)
		return none, err
	}
	e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: name, Status: "Started", Done: true})
	app.Labels = maps.Clone(app.Labels)
	if app.Labels == nil {
		app.Labels = map[string]string{}
	}
	app.Labels[LabelHasCompanion] = name
	if att.Sibling {
		return joined{app: joinApp(app, att), loopback: slices.Clone(att.AppLoopback), undo: undo}, nil
	}
	return joined{app: joinApp(app, att), netns: c.ID, undo: undo}, nil
}

// besideApp puts a sibling companion on its app's networks, under none of
// the app's names or addresses.
func besideApp(comp, a spec.App) spec.App {
	comp.Networks = nil
	for _, n := range a.Networks {
		comp.Networks = append(comp.Networks, spec.NetworkAttachment{Name: n.Name})
	}
	return comp
}

// sidecar resolves the companion att describes for a backend that runs it
// in one unit with the app: it shares the app's network namespace as it
// is (nothing moves), and the backend gates the app's start on Ready.
func (e *Engine) sidecar(ctx context.Context, p spec.Project, a spec.App, replica int, hash string, att Attachment) (joined, error) {
	appName := containerName(p.Name, a, replica)
	name := appName + CompanionSuffix
	dropVolumes := func() {
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = e.removeVolumeList(rmCtx, att.Volumes)
	}
	labels := containerLabels(p, att.Companion, replica, hash)
	labels[LabelCompanionOf] = appName
	cs, err := backends.Resolve(backends.ResolveInput{Project: p.Name, App: att.Companion, Replica: replica, Name: name, Labels: labels})
	if err != nil {
		dropVolumes()
		return joined{app: a, undo: func() {}}, fmt.Errorf("create %s: %w", name, err)
	}
	sc := &backends.Sidecar{Name: "caretaker", Spec: cs, Ready: slices.Clone(att.Ready), Shared: slices.Clone(att.Shared)}
	return joined{app: joinApp(a, att), sidecar: sc, undo: dropVolumes}, nil
}

// joinApp adds what a companion shares with its app: its mounts, the
// environment the app does not set itself, a wrapper of its command; and
// drops what it must not hold.
func joinApp(app spec.App, att Attachment) spec.App {
	for _, c := range att.AppCapDrop {
		if !slices.Contains(app.CapDrop, c) {
			app.CapDrop = append(slices.Clone(app.CapDrop), c)
		}
	}
	if len(att.AppMounts) > 0 {
		app.Mounts = append(slices.Clone(app.Mounts), att.AppMounts...)
	}
	if att.AppEntrypoint != nil {
		app.Entrypoint, app.Command = slices.Clone(att.AppEntrypoint), slices.Clone(att.AppCommand)
	}
	if len(att.AppEnv) > 0 {
		app.Env = maps.Clone(app.Env)
		if app.Env == nil {
			app.Env = map[string]string{}
		}
		for k, v := range att.AppEnv {
			if _, set := app.Env[k]; !set {
				app.Env[k] = v
			}
		}
	}
	return app
}

// splitNetns moves what belongs to the owner of a network namespace from
// the app to its companion.
func splitNetns(comp, a spec.App) (spec.App, spec.App) {
	comp.Networks, a.Networks = a.Networks, nil
	comp.Ports, a.Ports = a.Ports, nil
	comp.Expose, a.Expose = a.Expose, nil
	comp.Hostname, a.Hostname = a.Hostname, ""
	comp.Domainname, a.Domainname = a.Domainname, ""
	comp.DNS, a.DNS = a.DNS, nil
	comp.DNSSearch, a.DNSSearch = a.DNSSearch, nil
	comp.DNSOptions, a.DNSOptions = a.DNSOptions, nil
	comp.ExtraHosts, a.ExtraHosts = a.ExtraHosts, nil
	if len(a.Sysctls) > 0 {
		rest := map[string]string{}
		for k, v := range a.Sysctls {
			if strings.HasPrefix(k, "net.") {
				if comp.Sysctls == nil {
					comp.Sysctls = map[string]string{}
				}
				comp.Sysctls[k] = v
			} else {
				rest[k] = v
			}
		}
		a.Sysctls = rest
	}
	return comp, a
}

// waitCompanion runs ready in the container until it exits 0.
func (e *Engine) waitCompanion(ctx context.Context, id, name string, ready []string) error {
	if len(ready) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, companionReady)
	defer cancel()
	var out strings.Builder
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		out.Reset()
		code, err := e.b.Exec(ctx, id, backends.ExecOptions{Cmd: ready, Stdout: &out, Stderr: &out})
		if err == nil && code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			logs := e.tailLogs(id)
			return fmt.Errorf("%s did not become ready in %s (%s)%s", name, companionReady, strings.TrimSpace(out.String()), logs)
		case <-time.After(delay):
		}
	}
}

// tailLogs is the end of a container's output, for an error.
func (e *Engine) tailLogs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out strings.Builder
	if err := e.b.Logs(ctx, id, backends.LogOptions{Tail: 20, Stdout: &out, Stderr: &out}); err != nil || out.Len() == 0 {
		return ""
	}
	return ":\n" + out.String()
}

// removeCompanion removes the companion of a removed replica.
func (e *Engine) removeCompanion(ctx context.Context, c backends.Container) error {
	name := c.Labels[LabelHasCompanion]
	if name == "" {
		return nil
	}
	cs, err := e.b.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{LabelCompanionOf: c.Name}})
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	for _, comp := range cs {
		// Stopped first, with its grace: the caretaker undoes what it set
		// up (its mounts, propagated to the runtime's host) on SIGTERM.
		e.stopCompanion(ctx, comp.ID)
		if err := e.remove(ctx, comp, true); err != nil {
			return err
		}
		if v := comp.Labels[LabelCompanionVolumes]; v != "" {
			if err := e.removeVolumeList(ctx, strings.Split(v, ",")); err != nil {
				return fmt.Errorf("remove %s: %w", comp.Name, err)
			}
		}
	}
	return nil
}

// companionGrace bounds a companion's stop.
const companionGrace = 5 * time.Second

// stopCompanion stops a companion with its grace (best effort: removal
// follows either way).
func (e *Engine) stopCompanion(ctx context.Context, id string) {
	grace := companionGrace
	_ = e.b.Stop(ctx, id, backends.StopOptions{Timeout: &grace})
}

// removeVolumeList removes the volumes a companion shared with its app.
func (e *Engine) removeVolumeList(ctx context.Context, names []string) error {
	var errs []error
	for _, n := range names {
		if err := e.b.RemoveVolume(ctx, n, true); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("volume %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}
