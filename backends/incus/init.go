package incus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends/internal/monitor"
	"github.com/cornus-dev/cornus/backends/internal/rootfs"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// RunInit is the body of `cornus monitor incus ID` as a container's init
// (raw.lxc lxc.init.cmd): inside the container, as its pid 1, it prepares
// the container (prepare), then supervises the main process with the
// shared monitor (logs, healthchecks, restart policy, exit codes,
// record.json in the record directory the host shares with it). It
// returns when the main process has exited for good or ctx ends (incusd
// stopping the container sends SIGTERM); the container stops with it.
func RunInit(ctx context.Context, id string) error {
	store := monitor.NewStore(ctrRecords)
	dir, err := store.Dir(id)
	if err != nil {
		return err
	}
	task, err := newInitTask(dir, id)
	if err != nil {
		failRecord(store, id, err)
		return err
	}
	return monitor.Run(ctx, monitor.RunOptions{Store: store, ID: id, Task: task})
}

// newInitTask prepares the container. The init itself keeps every
// capability: Incus's exec (lxc-attach) gives a command no more than pid
// 1's bounding set, so a privileged exec or hook needs it whole. The main
// process and probes are confined instead, each through the helper
// (helperCommand), which drops what the container may not have and then
// becomes the command.
func newInitTask(dir, id string) (*initTask, error) {
	p, err := readProcConfig(dir)
	if err != nil {
		return nil, err
	}
	if err := prepare(p); err != nil {
		return nil, err
	}
	_, home, err := identity(p)
	if err != nil {
		return nil, err
	}
	return &initTask{id: id, proc: p, env: processEnv(p.Env, home), reaper: newReaper()}, nil
}

// processEnv completes an environment as Docker does: PATH and HOME when
// missing.
func processEnv(env []string, home string) []string {
	if _, ok := envlist.Lookup(env, "PATH"); !ok {
		env = append([]string{defaultPath}, env...)
	}
	if _, ok := envlist.Lookup(env, "HOME"); !ok {
		env = append(env, "HOME="+home)
	}
	return env
}

// failRecord records that the container could not be prepared, for the
// host to report (no monitor runs to do it).
func failRecord(store *monitor.Store, id string, err error) {
	r, rerr := store.Read(id)
	if rerr != nil {
		return
	}
	r.State = monitor.State{Status: monitor.StatusExited, ExitCode: 128, Error: err.Error(), FinishedAt: time.Now().UTC()}
	r.Monitor = monitor.MonitorProcess{}
	_ = store.Write(r)
}

// HelperName is the monitor subcommand of the helper the backend runs
// through Incus's exec API: `cornus monitor incus-helper ID`, with the
// request in the environment variable helperEnv.
const HelperName = "incus-helper"

const helperEnv = "CORNUS_INCUS_HELPER"

// helperRequest is what the exec helper does: run a command with the
// container's identity and confinement (op exec), or copy files (stat,
// archive, extract) through the container's own view of its filesystem.
type helperRequest struct {
	Op         string   `json:"op"` // exec, stat, archive, extract
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	Privileged bool     `json:"privileged,omitempty"`
	Path       string   `json:"path,omitempty"`
	// ExecFd, when set, is a descriptor the helper marks close-on-exec:
	// the init reads it to EOF to learn the command replaced the helper
	// (a signal sent before would reach the helper, not the command).
	ExecFd int `json:"execFd,omitempty"`
	// TTY runs the command on a terminal of the helper's own, sized
	// Width x Height (see runOnTerminal).
	TTY    bool `json:"tty,omitempty"`
	Width  int  `json:"width,omitempty"`
	Height int  `json:"height,omitempty"`
}

// Exit codes of the helper itself.
const (
	exitHelperFailed = 125 // the helper could not do its job (Docker's code for a daemon error)
	exitNotFound     = 127 // the command does not exist
	exitNotRunnable  = 126 // the command exists but cannot run
)

// RunHelper is the body of `cornus monitor incus-helper ID` inside a
// container. For exec it becomes the command (execve) and never returns;
// otherwise it returns the exit code to end with.
func RunHelper(id string, stdin io.Reader, stdout, stderr io.Writer) int {
	var req helperRequest
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv)), &req); err != nil {
		fmt.Fprintf(stderr, "cornus incus helper: bad request: %v\n", err)
		return exitHelperFailed
	}
	store := monitor.NewStore(ctrRecords)
	dir, err := store.Dir(id)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitHelperFailed
	}
	switch req.Op {
	case "exec":
		return helperExec(dir, req, stderr)
	case "stat", "archive", "extract":
		root, err := rootfs.Open("/")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitHelperFailed
		}
		defer root.Close()
		switch req.Op {
		case "stat":
			st, err := root.Lstat(req.Path)
			if err == nil {
				err = json.NewEncoder(stdout).Encode(st)
			}
			return helperResult(err, stderr)
		case "archive":
			return helperResult(root.Archive(req.Path, stdout), stderr)
		default:
			return helperResult(root.Extract(req.Path, stdin), stderr)
		}
	}
	fmt.Fprintf(stderr, "cornus incus helper: unknown op %q\n", req.Op)
	return exitHelperFailed
}

// Exit codes a copy helper reports its error class with.
const (
	exitCopyNotFound = 3
	exitCopyInvalid  = 4
	exitCopyDenied   = 5
)

func helperResult(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, err)
	switch {
	case errdefs.IsNotFound(err), errors.Is(err, os.ErrNotExist):
		return exitCopyNotFound
	case errdefs.IsInvalidArgument(err):
		return exitCopyInvalid
	case errdefs.IsPermissionDenied(err), errors.Is(err, os.ErrPermission):
		return exitCopyDenied
	}
	return exitHelperFailed
}

// helperExec becomes req.Cmd with the container's environment, user,
// working directory and confinement (unless privileged), as docker exec
// runs a command beside the main process.
func helperExec(dir string, req helperRequest, stderr io.Writer) int {
	if req.ExecFd > 2 {
		syscall.CloseOnExec(req.ExecFd)
	}
	p, err := readProcConfig(dir)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitHelperFailed
	}
	if req.User != "" {
		p.User = req.User
	}
	cred, home, err := identity(p)
	if err != nil {
		fmt.Fprintf(stderr, "exec: %v\n", err)
		return exitHelperFailed
	}
	env := processEnv(mergeEnv(p.Env, req.Env), home)
	if len(req.Cmd) == 0 {
		fmt.Fprintln(stderr, "exec: no command")
		return exitHelperFailed
	}
	path, err := lookPath(req.Cmd[0], env)
	if err != nil {
		fmt.Fprintf(stderr, "exec: %v\n", err)
		if errdefs.IsNotFound(err) || errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitNotRunnable
	}
	cwd := req.WorkingDir
	if cwd == "" {
		cwd = p.WorkingDir
	}
	if cwd == "" {
		cwd = "/"
	}
	if !req.Privileged {
		if err := confine(p.Caps, p.NoNewPrivs); err != nil {
			fmt.Fprintf(stderr, "exec: %v\n", err)
			return exitHelperFailed
		}
	}
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		fmt.Fprintf(stderr, "exec: groups: %v\n", err)
		return exitHelperFailed
	}
	if err := syscall.Setgid(int(cred.Gid)); err != nil {
		fmt.Fprintf(stderr, "exec: group %d: %v\n", cred.Gid, err)
		return exitHelperFailed
	}
	if err := syscall.Setuid(int(cred.Uid)); err != nil {
		fmt.Fprintf(stderr, "exec: user %d: %v\n", cred.Uid, err)
		return exitHelperFailed
	}
	if err := os.Chdir(cwd); err != nil {
		fmt.Fprintf(stderr, "exec: working directory: %v\n", err)
		return exitNotRunnable
	}
	if req.TTY {
		return runOnTerminal(path, req, env, stderr)
	}
	err = syscall.Exec(path, req.Cmd, env)
	fmt.Fprintf(stderr, "exec %s: %v\n", req.Cmd[0], err)
	return exitNotRunnable
}
