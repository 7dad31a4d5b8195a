package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/v2/client"

	"github.com/cornus-dev/cornus/internal/svc"
)

// An up that fails fast but exits 0 must not look fast: after each timed
// up, the bench asks the runtime itself (not the tool that ran the up)
// how many of the project's containers run.

// expectRunning fails the bench unless want containers run after what.
func expectRunning(what string, got, want int) {
	if got != want {
		fail(fmt.Errorf("after %s: %d of the project's containers run, want %d: a failed up is no measurement", what, got, want))
	}
}

// dockerdIDs lists the IDs of dockerd's containers with a label ("" for
// every container), all of them or, with states, those in one of the
// states.
func dockerdIDs(c *http.Client, api, label string, states ...string) []string {
	f := map[string][]string{}
	if label != "" {
		f["label"] = []string{label}
	}
	if len(states) > 0 {
		f["status"] = states
	}
	q, _ := json.Marshal(f)
	var cs []struct{ Id string }
	resp, err := c.Get("http://d" + api + "/containers/json?all=1&filters=" + url.QueryEscape(string(q)))
	if err != nil {
		fail(err)
	}
	decode(resp, &cs)
	ids := make([]string, 0, len(cs))
	for _, ct := range cs {
		ids = append(ids, ct.Id)
	}
	return ids
}

// runningOnDockerd counts a compose project's running containers.
func runningOnDockerd(c *http.Client, api, project string) int {
	return len(dockerdIDs(c, api, "com.docker.compose.project="+project, "running"))
}

// containerdStates lists the containers matching a containerd filter and
// their tasks' states ("" for a container without a task): one filtered
// list and one task list, the least a ps can ask.
func containerdStates(cli *client.Client, filter string) map[string]string {
	ctx := context.Background()
	cs, err := cli.Containers(ctx, filter)
	if err != nil {
		fail(fmt.Errorf("containerd: list containers %s: %w", filter, err))
	}
	ts, err := cli.TaskService().List(ctx, &tasks.ListTasksRequest{})
	if err != nil {
		fail(fmt.Errorf("containerd: list tasks: %w", err))
	}
	byID := map[string]string{}
	for _, t := range ts.Tasks {
		byID[t.ID] = strings.ToLower(t.Status.String()) // "running", "stopped", ...
	}
	out := make(map[string]string, len(cs))
	for _, c := range cs {
		out[c.ID()] = byID[c.ID()]
	}
	return out
}

// runningOnContainerd counts the running containers matching a filter.
func runningOnContainerd(cli *client.Client, filter string) int {
	n := 0
	for _, st := range containerdStates(cli, filter) {
		if st == "running" {
			n++
		}
	}
	return n
}

// composeFilter is the containerd filter of a compose project's containers
// (cornus puts the spec's labels on them).
func composeFilter(project string) string {
	return fmt.Sprintf(`labels."com.docker.compose.project"==%q`, project)
}

// runningOnBare counts how many of the containers cornus records for a
// project on the bare backend runc reports running (runc knows no
// projects; its state is the truth about what runs).
func (b bench) runningOnBare(env []string, project string) int {
	ids := strings.Fields(b.outEnv(env, b.cornus, "compose", "-p", project, "ps", "-a", "-q"))
	root := filepath.Join(svc.StateDir(append(os.Environ(), env...)), "bare", "runtime")
	out, err := exec.Command("runc", "--root", root, "list", "--format", "json").Output()
	if err != nil {
		fail(fmt.Errorf("runc --root %s list: %w", root, err))
	}
	var states []struct{ ID, Status string }
	if err := json.Unmarshal(out, &states); err != nil {
		fail(fmt.Errorf("runc list: %w", err))
	}
	running := map[string]bool{}
	for _, s := range states {
		running[s.ID] = s.Status == "running"
	}
	n := 0
	for _, id := range ids {
		if running[id] {
			n++
		}
	}
	return n
}

// runningOnIncus counts a project's running instances (cornus keeps the
// project in each instance's user.cornus.project).
func runningOnIncus(sock, project string) int {
	var resp struct {
		Metadata []struct {
			Status string
			Config map[string]string
		}
	}
	r, err := unixClient(sock).Get("http://incus/1.0/instances?recursion=1")
	if err != nil {
		fail(fmt.Errorf("incus: list instances: %w", err))
	}
	decode(r, &resp)
	n := 0
	for _, i := range resp.Metadata {
		if i.Config["user.cornus.project"] == project && i.Status == "Running" {
			n++
		}
	}
	return n
}

// runningOnKubernetes counts a project's pods that run and are not being
// deleted.
func (b bench) runningOnKubernetes(kubeconfig, namespace, project string) int {
	out := b.outEnv(nil, "kubectl", "--kubeconfig", kubeconfig, "-n", namespace, "get", "pods", "-l", "cornus.dev/project="+project,
		"-o", `jsonpath={range .items[*]}{.status.phase}{" "}{.metadata.deletionTimestamp}{"\n"}{end}`)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "Running" {
			n++
		}
	}
	return n
}
