package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// tracer is a reverse proxy in front of dockerd that records when each
// API call began and ended: pointing a tool's DOCKER_HOST at it draws the
// tool's own timeline (the hop costs well under a millisecond a call).
type tracer struct {
	sock string
	srv  *http.Server

	mu    sync.Mutex
	calls []traced
}

type traced struct {
	method, path string // path without the /vX.Y prefix
	span
}

func startTracer(dir, dockerSock string) *tracer {
	t := &tracer{sock: filepath.Join(dir, "trace.sock")}
	l, err := net.Listen("unix", t.sock)
	if err != nil {
		fail(fmt.Errorf("trace socket: %w", err))
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport:     unixClient(dockerSock).Transport,
		FlushInterval: -1, // streams (events, wait) pass through at once
	}
	t.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rp.ServeHTTP(w, r)
		t.mu.Lock()
		path := idRE.ReplaceAllStringFunc(versionRE.ReplaceAllString(r.URL.Path, ""), func(id string) string { return id[:12] })
		if name := r.URL.Query().Get("name"); path == "/containers/create" && name != "" {
			path = "/containers/" + name + "/create" // so the create joins its container's row
		}
		t.calls = append(t.calls, traced{method: r.Method, path: path, span: span{start, time.Now()}})
		t.mu.Unlock()
	})}
	go func() { _ = t.srv.Serve(l) }()
	return t
}

var (
	versionRE   = regexp.MustCompile(`^/v[0-9.]+`)
	idRE        = regexp.MustCompile(`[0-9a-f]{64}`) // shown as 12, like docker ps
	containerRE = regexp.MustCompile(`^/containers/([^/]+)(?:/([a-z]+))?$`)
)

// take returns the calls recorded so far and forgets them.
func (t *tracer) take() []traced {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls
	t.calls = nil
	return c
}

func (t *tracer) close() { _ = t.srv.Shutdown(context.Background()) }

// timelineRow is one container's calls, by verb, in ms from the origin.
type timelineRow struct {
	name  string
	verbs map[string][]span
}

// printTimeline prints one row per container (calls on it grouped by
// verb: first start → last end, ms from origin) and the other calls.
func printTimeline(title string, origin time.Time, total time.Duration, rows []timelineRow, other []traced) {
	fmt.Printf("  %s (ms from the first call; wall %0.f ms):\n", title, ms(total))
	slices.SortFunc(rows, func(a, b timelineRow) int { return strings.Compare(a.name, b.name) })
	at := func(t time.Time) float64 { return ms(t.Sub(origin)) }
	for _, r := range rows {
		var cols []string
		for _, v := range slices.SortedFunc(maps.Keys(r.verbs), func(a, b string) int {
			return r.verbs[a][0].start.Compare(r.verbs[b][0].start)
		}) {
			ss := r.verbs[v]
			first, last := ss[0].start, ss[0].end
			for _, s := range ss {
				first, last = minTime(first, s.start), maxTime(last, s.end)
			}
			label := v
			if len(ss) > 1 {
				label = fmt.Sprintf("%s×%d", v, len(ss))
			}
			cols = append(cols, fmt.Sprintf("%s %5.0f→%5.0f", label, at(first), at(last)))
		}
		fmt.Printf("    %-22s %s\n", r.name, strings.Join(cols, "   "))
	}
	if len(other) > 0 {
		byCall := map[string][]span{}
		for _, c := range other {
			byCall[c.method+" "+c.path] = append(byCall[c.method+" "+c.path], c.span)
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(byCall)) {
			ss := byCall[k]
			parts = append(parts, fmt.Sprintf("%s ×%d %.0f→%.0f", k, len(ss), at(ss[0].start), at(ss[len(ss)-1].end)))
		}
		fmt.Printf("    other calls: %s\n", strings.Join(parts, "; "))
	}
}

// tracedRows groups traced calls by container (names from byID, a map of
// ID and name to name) and returns the rest apart, with the first call's
// start as origin.
func tracedRows(calls []traced, byID map[string]string) (rows []timelineRow, other []traced, origin time.Time) {
	if len(calls) == 0 {
		return nil, nil, time.Time{}
	}
	origin = calls[0].start
	idx := map[string]int{}
	for _, c := range calls {
		origin = minTime(origin, c.start)
		m := containerRE.FindStringSubmatch(c.path)
		name, ok := "", false
		if m != nil {
			name, ok = byID[m[1]]
		}
		if !ok {
			other = append(other, c)
			continue
		}
		verb := m[2]
		if verb == "" && c.method == http.MethodDelete {
			verb = "remove"
		}
		i, seen := idx[name]
		if !seen {
			i = len(rows)
			idx[name] = i
			rows = append(rows, timelineRow{name: name, verbs: map[string][]span{}})
		}
		rows[i].verbs[verb] = append(rows[i].verbs[verb], c.span)
	}
	slices.SortFunc(other, func(a, b traced) int { return a.start.Compare(b.start) })
	return rows, other, origin
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
