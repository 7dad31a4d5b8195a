package bare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/containerd/errdefs"
)

// ociRuntime drives an OCI runtime CLI (runc, crun, youki, runsc: they
// share runc's command line) with its own state root.
type ociRuntime struct {
	path string // resolved binary
	name string // base name: runc, crun, youki, runsc
	root string // --root
}

// newRuntime finds the runtime binary and (with check) checks it runs and
// can run containers on this host, failing fast with what to do.
func newRuntime(bin, root string, check bool) (*ociRuntime, error) {
	// The host decides this before the binary does: installing crun here
	// would not help.
	if check && filepath.Base(bin) == "crun" && hybridCgroups() {
		return nil, crunOnHybrid(bin)
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("the bare backend's OCI runtime %q is not installed (%v): apt-get install runc, or set %s to runc, crun, youki or runsc: %w",
			bin, err, EnvRuntime, errdefs.ErrFailedPrecondition)
	}
	r := &ociRuntime{path: path, name: filepath.Base(path), root: root}
	if !check {
		return r, nil
	}
	if r.name == "crun" && hybridCgroups() {
		return nil, crunOnHybrid(bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the bare backend's OCI runtime %s does not run (%v: %s): reinstall it or set %s: %w",
			path, err, strings.TrimSpace(string(out)), EnvRuntime, errdefs.ErrFailedPrecondition)
	}
	return r, nil
}

func crunOnHybrid(bin string) error {
	return fmt.Errorf("%s=%s: crun refuses this host's cgroup v1 hybrid layout (v1 controllers plus cgroup2 at /sys/fs/cgroup/unified) and fails every container; use runc (the default) here, or crun on a host booted with the unified cgroup v2 hierarchy: %w",
		EnvRuntime, bin, errdefs.ErrFailedPrecondition)
}

// hybridCgroups reports the cgroup v1 hybrid layout: v1 controllers at
// /sys/fs/cgroup and the unified hierarchy beside them.
func hybridCgroups() bool {
	_, err := os.Stat("/sys/fs/cgroup/unified/cgroup.controllers")
	if err != nil {
		return false
	}
	_, err = os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// cmd is the runtime's command line for args.
func (r *ociRuntime) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, r.path, append([]string{"--root", r.root}, args...)...)
	c.WaitDelay = 5 * time.Second
	return c
}

// run runs a runtime command that produces no stream, and returns its
// stderr in the error.
func (r *ociRuntime) run(ctx context.Context, args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	c := r.cmd(ctx, args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.Bytes(), r.errorOf(args[0], err, errb.String())
	}
	return out.Bytes(), nil
}

// errorOf is a runtime failure with its message, as an errdefs class
// where it says one (no such container).
func (r *ociRuntime) errorOf(verb string, err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	if i := strings.LastIndex(msg, "\n"); i >= 0 && len(msg) > 2048 {
		msg = msg[i+1:]
	}
	var class error = errdefs.ErrUnknown
	switch {
	case strings.Contains(msg, "does not exist") || strings.Contains(msg, "not found") && strings.Contains(msg, "container"):
		class = errdefs.ErrNotFound
	case strings.Contains(msg, "not running") || strings.Contains(msg, "is stopped") || strings.Contains(msg, "cannot exec in a stopped"):
		class = errdefs.ErrConflict
	}
	return fmt.Errorf("%s %s: %v: %s: %w", r.name, verb, err, msg, class)
}

// runtimeState is `runc state`'s answer.
type runtimeState struct {
	ID     string `json:"id"`
	Pid    int    `json:"pid"`
	Status string `json:"status"` // creating, created, running, paused, stopped
	Bundle string `json:"bundle"`
}

// state asks the runtime about a container (NotFound when it has none).
func (r *ociRuntime) state(ctx context.Context, id string) (runtimeState, error) {
	out, err := r.run(ctx, "state", id)
	if err != nil {
		return runtimeState{}, err
	}
	var s runtimeState
	if err := json.Unmarshal(out, &s); err != nil {
		return s, fmt.Errorf("%s state %s: %w", r.name, id, err)
	}
	return s, nil
}

// delete removes the runtime's container, killing what still runs; one
// that is gone already is no error.
func (r *ociRuntime) delete(ctx context.Context, id string) error {
	if !r.mayHave(id) {
		return nil
	}
	_, err := r.run(ctx, "delete", "--force", id)
	if err != nil && !errdefs.IsNotFound(err) {
		if _, serr := r.state(ctx, id); errdefs.IsNotFound(serr) {
			return nil
		}
		return err
	}
	return nil
}

// mayHave reports whether the runtime may know the container: runc keeps
// a directory per container under its root, so none means no (which
// saves running it); for other runtimes, always maybe.
func (r *ociRuntime) mayHave(id string) bool {
	if r.name != "runc" {
		return true
	}
	_, err := os.Stat(filepath.Join(r.root, id))
	return !errors.Is(err, os.ErrNotExist)
}

// kill signals the container's init (all its processes with all).
func (r *ociRuntime) kill(ctx context.Context, id string, sig int, all bool) error {
	args := []string{"kill"}
	if all {
		args = append(args, "--all")
	}
	_, err := r.run(ctx, append(args, id, fmt.Sprint(sig))...)
	return err
}

// pids lists the container's processes.
func (r *ociRuntime) pids(ctx context.Context, id string) ([]int, error) {
	out, err := r.run(ctx, "ps", "--format", "json", id)
	if err != nil {
		return nil, err
	}
	var pids []int
	if err := json.Unmarshal(out, &pids); err != nil {
		return nil, fmt.Errorf("%s ps %s: %w", r.name, id, err)
	}
	return pids, nil
}

// isNotFound reports a runtime error for a container it does not know.
func isNotFound(err error) bool { return errors.Is(err, errdefs.ErrNotFound) }
