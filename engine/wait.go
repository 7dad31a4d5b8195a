package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/statustext"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// waitCondition blocks until service dep of project p satisfies cond, or
// fails fast — naming the service and showing its last log lines — when it
// exits or turns unhealthy instead.
func (e *Engine) waitCondition(ctx context.Context, p spec.Project, dep, cond string) error {
	a := p.Services[dep]
	switch cond {
	case spec.ConditionStarted:
		return nil
	case spec.ConditionHealthy:
		if !hasHealthcheck(a) {
			return e.poll(ctx, p.Name, dep, func(cs []backends.Container) (bool, error) {
				for _, c := range cs {
					if e.healthOf(c) == backends.HealthNone {
						return false, fmt.Errorf("dependency %s has no healthcheck, so it can never be healthy: add one or use condition service_started", dep)
					}
				}
				return e.allHealthy(ctx, dep, a.Restart, cs)
			})
		}
		return e.poll(ctx, p.Name, dep, func(cs []backends.Container) (bool, error) { return e.allHealthy(ctx, dep, a.Restart, cs) })
	case spec.ConditionCompleted:
		cs, err := e.b.List(ctx, backends.ListOptions{Labels: appLabels(p.Name, dep), All: true})
		if err != nil {
			return err
		}
		for _, c := range cs {
			code, err := e.b.Wait(ctx, c.ID)
			if err != nil {
				return fmt.Errorf("wait for %s: %w", c.Name, err)
			}
			if code != 0 {
				return fmt.Errorf("dependency %s did not complete successfully: %s exited with code %d%s", dep, c.Name, code, e.lastLogs(ctx, c.ID))
			}
		}
		return nil
	}
	return fmt.Errorf("unknown depends_on condition %q", cond)
}

func hasHealthcheck(a spec.App) bool {
	h := a.Healthcheck
	return h != nil && !h.Disable && (len(h.Test) == 0 || h.Test[0] != "NONE")
}

// allHealthy reports whether every container is healthy, failing on an
// unhealthy or exited one. An exit its restart policy restarts is a crash
// loop whatever state the runtime shows between the runs (podman has no
// "restarting", and may show "exited" for a moment).
func (e *Engine) allHealthy(ctx context.Context, dep, restart string, cs []backends.Container) (bool, error) {
	ok := len(cs) > 0
	policy, _ := spec.ParseRestart(restart) // validated
	for _, c := range cs {
		switch {
		case c.State == backends.StateRestarting || c.State == backends.StateExited && restartsAfter(policy, c.ExitCode):
			return false, fmt.Errorf("dependency %s is crash-looping (%s)%s", dep, statustext.Docker(c, time.Now()), e.lastLogs(ctx, c.ID))
		case !c.Running():
			return false, fmt.Errorf("dependency %s exited (%s) before becoming healthy%s", dep, statusWord(c), e.lastLogs(ctx, c.ID))
		case e.healthOf(c) == backends.HealthUnhealthy:
			return false, fmt.Errorf("dependency %s is unhealthy%s%s", dep, e.lastProbe(ctx, c.ID), e.lastLogs(ctx, c.ID))
		case e.healthOf(c) != backends.HealthHealthy:
			ok = false
		}
	}
	return ok, nil
}

// poll lists the app's containers until check says done or fails.
func (e *Engine) poll(ctx context.Context, project, app string, check func([]backends.Container) (bool, error)) error {
	start := time.Now()
	for {
		cs, err := e.b.List(ctx, backends.ListOptions{Labels: appLabels(project, app), All: true})
		if err != nil {
			return err
		}
		done, err := check(cs)
		if err != nil || done {
			return err
		}
		delay := 50 * time.Millisecond
		if time.Since(start) > 2*time.Second {
			delay = 250 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", app, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// restartsAfter reports whether policy restarts a container that exited
// with code (on-failure: retries left or not, it is looping).
func restartsAfter(policy spec.RestartPolicy, code int) bool {
	switch policy.Name {
	case spec.RestartAlways, spec.RestartUnlessStopped:
		return true
	case spec.RestartOnFailure:
		return code != 0
	}
	return false
}

func statusWord(c backends.Container) string {
	if c.State == backends.StateExited {
		return fmt.Sprintf("exit code %d", c.ExitCode)
	}
	return string(c.State)
}

// lastLogs returns the container's last lines, indented, for error messages.
func (e *Engine) lastLogs(ctx context.Context, id string) string {
	var buf bytes.Buffer
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.b.Logs(lctx, id, backends.LogOptions{Tail: 10, Stdout: &buf, Stderr: &buf}); err != nil || buf.Len() == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	return "; last log lines:\n    " + strings.Join(lines, "\n    ")
}

// lastProbe returns the last healthcheck probe's exit code and output.
func (e *Engine) lastProbe(ctx context.Context, id string) string {
	var log []backends.HealthResult
	e.mu.Lock()
	if m := e.health[id]; m != nil {
		m.mu.Lock()
		log = append(log, m.log...)
		m.mu.Unlock()
	}
	e.mu.Unlock()
	if len(log) == 0 {
		if d, err := e.b.Inspect(ctx, id); err == nil {
			log = d.HealthLog
		}
	}
	if len(log) == 0 {
		return ""
	}
	last := log[len(log)-1]
	out := strings.TrimSpace(last.Output)
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i] + " …"
	}
	return fmt.Sprintf(" (last healthcheck exited %d: %s)", last.ExitCode, out)
}

// waitReady is `up --wait`: every selected service running (and healthy if
// it has a healthcheck); a service others wait on to complete may have
// exited 0.
func (e *Engine) waitReady(ctx context.Context, p spec.Project, sel map[string]bool) error {
	completers := map[string]bool{}
	for _, a := range p.Services {
		for d, dep := range a.DependsOn {
			if dep.Condition == spec.ConditionCompleted {
				completers[d] = true
			}
		}
	}
	for _, name := range p.ServiceNames() {
		if !sel[name] || p.Services[name].ReplicaCount() == 0 {
			continue
		}
		a := p.Services[name]
		err := e.poll(ctx, p.Name, name, func(cs []backends.Container) (bool, error) {
			for _, c := range cs {
				if c.State == backends.StateExited && c.ExitCode == 0 && completers[name] {
					continue
				}
				if c.State == backends.StateRestarting {
					return false, fmt.Errorf("service %s: container %s is crash-looping (%s)%s", name, c.Name, statustext.Docker(c, time.Now()), e.lastLogs(ctx, c.ID))
				}
				if !c.Running() {
					return false, fmt.Errorf("service %s: container %s exited (%s)%s", name, c.Name, statusWord(c), e.lastLogs(ctx, c.ID))
				}
				if hasHealthcheck(a) {
					switch e.healthOf(c) {
					case backends.HealthUnhealthy:
						return false, fmt.Errorf("service %s: container %s is unhealthy%s%s", name, c.Name, e.lastProbe(ctx, c.ID), e.lastLogs(ctx, c.ID))
					case backends.HealthHealthy:
					default:
						return false, nil
					}
				}
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if hasHealthcheck(a) {
			for i := 1; i <= a.ReplicaCount(); i++ {
				e.progressOf(ctx).Event(progress.Event{Kind: "Container", ID: containerName(p.Name, a, i), Status: "Healthy", Done: true})
			}
		}
	}
	return nil
}
