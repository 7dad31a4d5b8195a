package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// timelines runs up -d and down once more for each tool and prints when
// each container's calls ran: cornus and docker compose through the
// tracing proxy, the floor from its own timing. Not part of the medians.
func (b bench) timelines(fl floor, dockerSock string) {
	t := startTracer(b.dir, dockerSock)
	defer t.close()
	env := []string{"DOCKER_HOST=unix://" + t.sock}
	type section struct {
		title  string
		origin time.Time
		wall   time.Duration
		rows   []timelineRow
		other  []traced
	}
	var ups, downs []section
	traceRun := func(title, bin string, args []string, names func() map[string]string) section {
		t.take()
		start := time.Now()
		b.mustEnv(env, bin, args...)
		wall := time.Since(start)
		rows, other, origin := tracedRows(t.take(), names())
		return section{title, origin, wall, rows, other}
	}
	for _, tool := range []struct {
		name, bin, project string
		args               func(...string) []string
	}{
		{"cornus compose", b.cornus, "bench-cornus", b.cornusArgs},
		{"docker compose", b.compose, "bench-compose", b.composeArgs},
	} {
		var names map[string]string
		ups = append(ups, traceRun(tool.name+" up -d — its API calls, traced", tool.bin, tool.args("up", "-d"), func() map[string]string {
			names = fl.namesOf(tool.project)
			return names
		}))
		downs = append(downs, traceRun(tool.name+" down — its API calls, traced", tool.bin, tool.args("down"), func() map[string]string { return names }))
	}
	start := time.Now()
	r := fl.up()
	upWall := time.Since(start)
	start = time.Now()
	stops, removes, network := fl.down(r)
	downWall := time.Since(start)
	var upRows, downRows []timelineRow
	for i := range r.ids {
		name := fmt.Sprintf("%s-s%d-1", fl.project, i)
		upRows = append(upRows, timelineRow{name: name, verbs: map[string][]span{"create": {r.creates[i]}, "start": {r.starts[i]}}})
		downRows = append(downRows, timelineRow{name: name, verbs: map[string][]span{"stop": {stops[i]}, "remove": {removes[i]}}})
	}
	ups = append(ups, section{"floor up — the network, then create and start per container in parallel", r.createNetwork.start, upWall, upRows,
		[]traced{{method: http.MethodPost, path: "/networks/create", span: r.createNetwork}}})
	downs = append(downs, section{"floor down — stop then remove per container in parallel, then the network", start, downWall, downRows,
		[]traced{{method: http.MethodDelete, path: "/networks/" + r.network[:12], span: network}}})
	for _, group := range []struct {
		what     string
		sections []section
	}{{"up -d", ups}, {"down", downs}} {
		fmt.Printf("%s, one more run each, per container (calls grouped by verb, first start → last end):\n", group.what)
		for _, s := range group.sections {
			printTimeline(s.title, s.origin, s.wall, s.rows, s.other)
		}
	}
}

// namesOf maps the IDs and names of a compose project's containers to
// their names.
func (f floor) namesOf(project string) map[string]string {
	q := url.QueryEscape(fmt.Sprintf(`{"label":["com.docker.compose.project=%s"]}`, project))
	var cs []struct {
		Id    string
		Names []string
	}
	f.call(http.MethodGet, "/containers/json?all=1&filters="+q, nil, http.StatusOK, &cs)
	out := map[string]string{}
	for _, c := range cs {
		if len(c.Names) == 0 {
			continue
		}
		name := strings.TrimPrefix(c.Names[0], "/")
		out[c.Id], out[c.Id[:12]], out[name] = name, name, name
	}
	return out
}

// bestEffort runs a cleanup (a down that may find nothing left) and
// ignores how it ends: deferred, it must not hide the failure that ended
// the bench.
func (b bench) bestEffort(env []string, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = b.dir, append(os.Environ(), env...)
	_ = cmd.Run()
}

// mustEnv runs a tool with extra environment (later entries win).
func (b bench) mustEnv(env []string, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String()))
	}
}
