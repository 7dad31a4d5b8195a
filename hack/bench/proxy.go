package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proxyLatency compares median request latency through `cornus daemon
// docker` (the real binary, over the dockerhost backend) with dockerd
// directly, for GET /containers/json and GET /containers/{id}/json, three
// ways: read cache warm, read cache off (CORNUS_DOCKERAPI_CACHE=off), and
// with the cache on while healthchecks keep invalidating it. Every proxied
// answer is compared with dockerd's (answers.go), so a fast wrong answer
// cannot win a row. It reports whether every row's answers held.
func (b bench) proxyLatency(image, dockerSock string, requests int) (answersHeld bool) {
	direct := unixClient(dockerSock)
	api := apiVersion(direct)
	warm, stopWarm := b.startProxy("warm", nil)
	defer stopWarm()
	off, stopOff := b.startProxy("off", []string{"CORNUS_DOCKERAPI_CACHE=off"})
	defer stopOff()

	// A few idle containers so the list is not empty; the warm and off rows
	// inspect the first, which nothing changes.
	var ids []string
	defer func() {
		for _, id := range ids {
			req, _ := http.NewRequest(http.MethodDelete, "http://d"+api+"/containers/"+id+"?force=1", nil)
			if resp, err := direct.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	for i := range 5 {
		body := fmt.Sprintf(`{"Image":%q,"Cmd":["sleep","600"],"Labels":{"cornus.bench":"proxy"}}`, image)
		resp, err := direct.Post(fmt.Sprintf("http://d%s/containers/create?name=bench-proxy-%d", api, i), "application/json", strings.NewReader(body))
		if err != nil {
			fail(fmt.Errorf("create bench-proxy-%d: %w", i, err))
		}
		var out struct{ Id string }
		decode(resp, &out)
		ids = append(ids, out.Id)
	}
	list := probe{"GET /containers/json", func(int) string { return api + "/containers/json?all=1" },
		func(body []byte) (string, string, error) { return canonList(body, benchOwned) }}
	inspect := func(ids []string) probe {
		return probe{"GET /containers/{id}/json", func(i int) string { return api + "/containers/" + ids[i%len(ids)] + "/json" },
			func(body []byte) (string, string, error) { s, err := canonInspect(body); return s, "", err }}
	}
	answersHeld = true
	measure := func(proxied *http.Client, probes ...probe) {
		for _, p := range probes {
			r := alternate(direct, proxied, p, requests)
			answersHeld = proxyRow(p.name, r) && answersHeld
		}
	}
	fmt.Printf("  read cache warm (served from memory between events; the daemon lists %d containers)\n", len(dockerdIDs(direct, api, "")))
	measure(warm, list, inspect(ids[:1]))
	fmt.Println("  read cache bypassed (CORNUS_DOCKERAPI_CACHE=off: every request reaches dockerd)")
	measure(off, list, inspect(ids[:1]))
	floor, stopFloor := b.floorProxy(dockerSock)
	defer stopFloor()
	fmt.Println("  the floor of any proxy: one more HTTP hop passing bytes (net/http's reverse proxy, in the bench)")
	measure(floor, list, inspect(ids[:1]))

	// Churn: 10 running containers with a healthcheck every second; each
	// check is several events on its container (exec_create, exec_start,
	// exec_die; health_status on a change), and each event drops that
	// container's entry and the list. The inspect row reads the churned
	// containers in turn: an idle one would stay cached.
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "churn.yaml", "-p", "bench-churn", "up", "-d")
	defer b.must(b.cornus, "compose", "--progress", "quiet", "-f", "churn.yaml", "-p", "bench-churn", "down", "-t", "0")
	churned := b.waitHealthy(direct, api, "bench-churn", 10)
	stopCount := countEvents(dockerSock, api)
	start := time.Now()
	fmt.Printf("  under churn (read cache on; 10 more containers with 1s healthchecks, inspected in turn; the daemon lists %d)\n", len(dockerdIDs(direct, api, "")))
	measure(warm, list, inspect(churned))
	total, byID := stopCount()
	onInspected := 0
	for _, id := range churned {
		onInspected += byID[id]
	}
	took := time.Since(start).Seconds()
	fmt.Printf("    (dockerd sent %.0f container events/s while measuring, %.0f/s on the inspected containers: each drops the entry it names and the list)\n",
		float64(total)/took, float64(onInspected)/took)
	if onInspected == 0 {
		fmt.Println("    the churn row inspected containers no event touched: it measured nothing")
		answersHeld = false
	}
	return answersHeld
}

// waitHealthy waits (up to a minute) until the project's n containers run
// and report healthy, and returns their IDs.
func (b bench) waitHealthy(c *http.Client, api, project string, n int) []string {
	deadline := time.Now().Add(time.Minute)
	for {
		var cs []struct{ Id, State, Status string }
		resp, err := c.Get("http://d" + api + "/containers/json?filters=" + url.QueryEscape(fmt.Sprintf(`{"label":["com.docker.compose.project=%s"]}`, project)))
		if err != nil {
			fail(err)
		}
		decode(resp, &cs)
		var ids []string
		for _, ct := range cs {
			if ct.State == "running" && strings.Contains(ct.Status, "(healthy)") {
				ids = append(ids, ct.Id)
			}
		}
		if len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("project %s: %d of %d containers healthy after a minute", project, len(ids), n))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// benchOwned tells the proxy rows' own containers (the idle ones and the
// churn project) by their labels.
func benchOwned(labels map[string]string) bool {
	return labels["cornus.bench"] == "proxy" || labels["com.docker.compose.project"] == "bench-churn"
}

// churnProject renders the churn project: n services, healthchecks every
// second, processes that exit on SIGTERM.
func churnProject(image string, n int) string {
	var s strings.Builder
	s.WriteString("services:\n")
	for i := range n {
		fmt.Fprintf(&s, "  c%d:\n    image: %s\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1 & wait $$!; done\"]\n"+
			"    healthcheck: {test: [\"CMD\", \"true\"], interval: 1s, timeout: 1s}\n", i, image)
	}
	return s.String()
}

// probe is one row's request: its path for the i-th request, and the
// canonical forms of its answer: the part about the bench's own
// containers, and the part about the others on the daemon.
type probe struct {
	name  string
	path  func(i int) string
	canon func([]byte) (mine, others string, err error)
}

// probeResult is one row: the timings, how many proxied answers equalled
// none of dockerd's answers around them on the bench's own containers
// (the first difference as an example), and how many differed only on
// other users' containers.
type probeResult struct {
	direct, proxied []time.Duration
	requests        int
	differ, others  int
	example         string
}

// alternate times requests GETs on both clients, alternating which goes
// first so drift affects both, and checks each proxied answer against
// dockerd's: the one of the same pair, the one before it (dockerd may
// change between the two requests), or else one more taken after both.
func alternate(direct, proxied *http.Client, p probe, requests int) probeResult {
	r := probeResult{requests: requests}
	type answer struct{ mine, others string }
	before := map[string]answer{} // path → dockerd's latest answer
	canon := func(body []byte) answer {
		m, o, err := p.canon(body)
		if err != nil {
			fail(fmt.Errorf("%s: %w", p.name, err))
		}
		return answer{m, o}
	}
	for i := range requests {
		path := p.path(i)
		var td, tp time.Duration
		var bd, bp []byte
		if i%2 == 0 {
			td, bd = timeGet(direct, path)
			tp, bp = timeGet(proxied, path)
		} else {
			tp, bp = timeGet(proxied, path)
			td, bd = timeGet(direct, path)
		}
		r.direct, r.proxied = append(r.direct, td), append(r.proxied, tp)
		cd, cp := canon(bd), canon(bp)
		if cp != cd && cp != before[path] {
			_, again := timeGet(direct, path)
			if cd = canon(again); cp.mine != cd.mine && cp.mine != before[path].mine {
				r.differ++
				if r.example == "" {
					r.example = firstDifference(cd.mine, cp.mine)
				}
			} else if cp != cd {
				r.others++
			}
		}
		before[path] = cd
	}
	return r
}

// proxyRow prints one row and reports whether its answers held: at most
// 1% of them (a race no pair of requests can order) may differ on the
// bench's own containers.
func proxyRow(name string, r probeResult) bool {
	mp, md := median(r.proxied), median(r.direct)
	ratio := float64(mp) / float64(md)
	held := r.differ*100 <= r.requests
	verdict := "meets"
	switch {
	case !held:
		verdict = "MISSES: wrong answers"
	case ratio > 1.15:
		verdict = "MISSES"
	}
	fmt.Printf("    %-27s proxy %6.3f ms   dockerd %6.3f ms   ratio %.2fx (target <= 1.15x: %s)   answers equal dockerd's: %d/%d\n",
		name, ms(mp), ms(md), ratio, verdict, r.requests-r.differ, r.requests)
	if r.differ > 0 {
		fmt.Printf("      first difference: %s\n", r.example)
	}
	if r.others > 0 {
		fmt.Printf("      (%d more differed only on other users' containers, which changed meanwhile)\n", r.others)
	}
	return held
}

// startProxy runs `cornus daemon docker` on a socket in the scratch
// directory with extra environment, and returns a client for it.
func (b bench) startProxy(name string, env []string) (*http.Client, func()) {
	sock := filepath.Join(b.dir, name+".sock")
	cmd := exec.Command(b.cornus, "daemon", "docker", "--listen", "unix://"+sock)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = io.Discard
	// Dies with the bench, even when it exits through fail.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		fail(fmt.Errorf("start cornus daemon docker: %w", err))
	}
	c := unixClient(sock)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get("http://d/_ping")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			fail(fmt.Errorf("cornus daemon docker on %s: not answering after 10s: %w", sock, err))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c, func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
}

// countEvents counts container events from dockerd; the returned func
// stops counting and returns the count, in all and by container ID.
func countEvents(dockerSock, api string) func() (int, map[string]int) {
	ctx, cancel := context.WithCancel(context.Background())
	n, byID := 0, map[string]int{}
	done := make(chan struct{})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://d"+api+"/events?filters="+url.QueryEscape(`{"type":["container"]}`), nil)
	resp, err := unixClient(dockerSock).Do(req)
	if err != nil {
		fail(fmt.Errorf("GET /events: %w", err))
	}
	go func() {
		defer close(done)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var m struct{ Actor struct{ ID string } }
			if dec.Decode(&m) != nil {
				return
			}
			n++
			byID[m.Actor.ID]++
		}
	}()
	return func() (int, map[string]int) { cancel(); <-done; return n, byID }
}

// apiVersion is the path prefix for dockerd's own API version.
func apiVersion(c *http.Client) string {
	resp, err := c.Get("http://d/version")
	if err != nil {
		fail(fmt.Errorf("GET /version: %w", err))
	}
	var v struct{ ApiVersion string }
	decode(resp, &v)
	return "/v" + v.ApiVersion
}

// floorProxy serves a byte-passing reverse proxy to dockerd on a unix
// socket: what a second HTTP hop costs before any conversion.
func (b bench) floorProxy(dockerSock string) (*http.Client, func()) {
	sock := filepath.Join(b.dir, "floor.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		fail(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "d" },
		Transport: unixClient(dockerSock).Transport}
	srv := &http.Server{Handler: rp}
	go srv.Serve(l) //nolint:errcheck // ends with Close
	return unixClient(sock), func() { srv.Close() }
}

func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
}

// timeGet times one GET, its whole body read, and returns the body.
func timeGet(c *http.Client, path string) (time.Duration, []byte) {
	start := time.Now()
	resp, err := c.Get("http://d" + path)
	if err != nil {
		fail(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		fail(fmt.Errorf("GET %s: %w", path, err))
	}
	if resp.StatusCode != 200 {
		fail(fmt.Errorf("GET %s: %s", path, resp.Status))
	}
	return took, body
}
