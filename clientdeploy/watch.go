package clientdeploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/tarfs"
	"github.com/cornus-dev/cornus/spec"
)

// WatchOptions are compose watch's.
type WatchOptions struct {
	Services []string // empty: all with develop.watch rules
	Out      io.Writer
	// Interval is how often the files are looked at (0: 200 ms); a batch
	// of changes is acted on once a look finds nothing new.
	Interval time.Duration
	// Rebuild builds and redeploys services (a rebuild rule fired).
	Rebuild func(ctx context.Context, services []string) error
}

// watched is one service's rules.
type watched struct {
	service string
	rules   []*ruleFiles
	pending []map[string]bool // per rule: changed (true) or gone (false)
}

// Watch acts on the services' develop.watch rules as docker compose watch
// does, until ctx ends: sync copies changed files into every replica
// (and removes gone ones), restart restarts the service, sync+exec runs
// its command in each replica, rebuild calls o.Rebuild. Locally and
// through a server alike: it speaks the engine's cp, exec and restart.
func Watch(ctx context.Context, eng Engine, p spec.Project, o WatchOptions) error {
	ws, err := watchedServices(p, o.Services)
	if err != nil {
		return err
	}
	interval := o.Interval
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	for _, w := range ws {
		for i, rf := range w.rules {
			if rf.rule.InitialSync && rf.rule.Syncs() {
				for _, rel := range rf.all() {
					w.pending[i][rel] = true
				}
			}
		}
		if err := w.flush(ctx, eng, p.Name, o); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Out, "Watch enabled for %s\n", strings.Join(serviceNames(ws), ", "))
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, w := range ws {
			fresh, err := w.poll()
			if err != nil {
				return err
			}
			if fresh {
				continue // settle first: an editor's save is several writes
			}
			if err := w.flush(ctx, eng, p.Name, o); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				fmt.Fprintf(o.Out, "watch: service %q: %v\n", w.service, err)
			}
		}
	}
}

func watchedServices(p spec.Project, names []string) ([]*watched, error) {
	if len(names) == 0 {
		names = p.ServiceNames()
	}
	var out []*watched
	for _, n := range names {
		a, ok := p.Services[n]
		if !ok {
			return nil, fmt.Errorf("no such service: %s", n)
		}
		if len(a.Watch) == 0 {
			continue
		}
		w := &watched{service: n}
		for _, r := range a.Watch {
			rf, err := newRuleFiles(r)
			if err != nil {
				return nil, fmt.Errorf("services.%s.develop.watch %s: %w", n, r.Path, err)
			}
			w.rules = append(w.rules, rf)
			w.pending = append(w.pending, map[string]bool{})
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, errors.New("none of the selected services is configured for watch: add a develop.watch section to one (https://docs.docker.com/compose/file-watch/)")
	}
	return out, nil
}

func serviceNames(ws []*watched) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.service
	}
	return out
}

// poll records what changed since the last look; fresh reports news.
func (w *watched) poll() (fresh bool, err error) {
	for i, rf := range w.rules {
		changed, gone, err := rf.poll()
		if err != nil {
			return false, fmt.Errorf("watch %s: %w", rf.rule.Path, err)
		}
		for _, rel := range changed {
			w.pending[i][rel] = true
		}
		for _, rel := range gone {
			w.pending[i][rel] = false
		}
		fresh = fresh || len(changed)+len(gone) > 0
	}
	return fresh, nil
}

// flush acts on the pending changes: a rebuild supersedes the rest.
func (w *watched) flush(ctx context.Context, eng Engine, project string, o WatchOptions) error {
	var syncs, restart, rebuild bool
	n := 0
	for i, rf := range w.rules {
		if len(w.pending[i]) == 0 {
			continue
		}
		n += len(w.pending[i])
		switch rf.rule.Action {
		case spec.WatchRebuild:
			rebuild = true
		case spec.WatchRestart, spec.WatchSyncRestart:
			restart = true
		}
		syncs = syncs || rf.rule.Syncs()
	}
	if n == 0 {
		return nil
	}
	defer func() {
		for i := range w.pending {
			clear(w.pending[i])
		}
	}()
	if rebuild {
		fmt.Fprintf(o.Out, "Rebuilding service %q after changes were detected...\n", w.service)
		if o.Rebuild == nil {
			return errors.New("rebuild: not available here")
		}
		return o.Rebuild(ctx, []string{w.service})
	}
	if syncs {
		fmt.Fprintf(o.Out, "Syncing service %q after %d changes were detected\n", w.service, n)
		if err := w.sync(ctx, eng, project, w.pending); err != nil {
			return err
		}
	}
	if restart {
		if err := w.restart(ctx, eng, project, o.Out); err != nil {
			return err
		}
	}
	for i, rf := range w.rules {
		if rf.rule.Action == spec.WatchSyncExec && len(w.pending[i]) > 0 {
			if err := w.each(ctx, eng, project, execOf(rf.rule.Exec, o.Out)); err != nil {
				return err
			}
		}
	}
	return nil
}

// restart restarts the service. Where that replaces its containers (a
// Deployment's pods on kubernetes), what the sync rules copied went with
// them: their whole trees are copied into the new ones.
func (w *watched) restart(ctx context.Context, eng Engine, project string, out io.Writer) error {
	fmt.Fprintf(out, "Restarting service %q after changes were detected\n", w.service)
	before, err := w.containerIDs(ctx, eng, project)
	if err != nil {
		return err
	}
	if err := eng.Restart(ctx, project, engine.LifecycleOptions{Services: []string{w.service}}); err != nil {
		return err
	}
	after, err := w.containerIDs(ctx, eng, project)
	if err != nil || slices.Equal(before, after) {
		return err
	}
	all := make([]map[string]bool, len(w.rules))
	for i, rf := range w.rules {
		all[i] = map[string]bool{}
		for _, rel := range rf.all() {
			all[i][rel] = true
		}
	}
	return w.sync(ctx, eng, project, all)
}

// containerIDs tell the service's containers apart from any that
// replace them.
func (w *watched) containerIDs(ctx context.Context, eng Engine, project string) ([]string, error) {
	cs, err := eng.PS(ctx, project, engine.PSOptions{Services: []string{w.service}})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		// A replaced replica may keep its ID (a Deployment's slot), not
		// its creation time.
		ids = append(ids, c.ID+"@"+c.Created.String())
	}
	slices.Sort(ids)
	return ids, nil
}

// sync copies the sync rules' changed files (changes: per rule, true for
// written, false for gone) into every replica, then removes the gone
// ones there.
func (w *watched) sync(ctx context.Context, eng Engine, project string, changes []map[string]bool) error {
	files := map[string]string{} // name in the tar (from /) → local path
	var gone []string
	for i, rf := range w.rules {
		if !rf.rule.Syncs() {
			continue
		}
		for rel, present := range changes[i] {
			target := path.Join(rf.rule.Target, rel)
			local := filepath.Join(rf.rule.Path, filepath.FromSlash(rel))
			if present && exists(local) {
				files[strings.TrimPrefix(target, "/")] = local
			} else {
				gone = append(gone, target)
			}
		}
	}
	if len(files) > 0 {
		open := func() (io.ReadCloser, error) {
			pr, pw := io.Pipe()
			go func() { pw.CloseWithError(tarfs.WriteFiles(pw, files)) }()
			return pr, nil
		}
		if err := eng.CopyTo(ctx, project, engine.CopyOptions{Service: w.service}, "/", open); err != nil {
			return err
		}
	}
	if len(gone) == 0 {
		return nil
	}
	sort.Strings(gone)
	rm := &spec.Hook{Command: append([]string{"rm", "-rf", "--"}, gone...)}
	return w.each(ctx, eng, project, execOf(rm, io.Discard))
}

// execOf runs h in one replica, its output to out.
func execOf(h *spec.Hook, out io.Writer) func(ctx context.Context, eng Engine, project string, o engine.ExecOptions) error {
	return func(ctx context.Context, eng Engine, project string, o engine.ExecOptions) error {
		var errb bytes.Buffer
		o.ExecOptions = backends.ExecOptions{Cmd: h.Command, User: h.User, WorkingDir: h.WorkingDir, Env: h.Environ(), Stdout: out, Stderr: &errb}
		code, err := eng.Exec(ctx, project, o)
		if err == nil && code != 0 {
			err = fmt.Errorf("%s exited with code %d: %s", strings.Join(h.Command, " "), code, strings.TrimSpace(errb.String()))
		}
		return err
	}
}

// each runs do in every running replica of the service.
func (w *watched) each(ctx context.Context, eng Engine, project string, do func(context.Context, Engine, string, engine.ExecOptions) error) error {
	cs, err := eng.PS(ctx, project, engine.PSOptions{Services: []string{w.service}})
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Oneoff() || !c.Running() {
			continue
		}
		if err := do(ctx, eng, project, engine.ExecOptions{Service: w.service, Index: c.ReplicaNumber()}); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return nil
}
