package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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
// with the cache on while healthchecks keep invalidating it.
func (b bench) proxyLatency(image, dockerSock string, requests int) {
	direct := unixClient(dockerSock)
	api := apiVersion(direct)
	warm, stopWarm := b.startProxy("warm", nil)
	defer stopWarm()
	off, stopOff := b.startProxy("off", []string{"CORNUS_DOCKERAPI_CACHE=off"})
	defer stopOff()

	// A few idle containers so the list is not empty; the inspected one is
	// the same in every row.
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
	paths := []struct{ name, path string }{
		{"GET /containers/json", api + "/containers/json?all=1"},
		{"GET /containers/{id}/json", api + "/containers/" + ids[0] + "/json"},
	}
	listed := func() int {
		var cs []struct{ Id string }
		resp, err := direct.Get("http://d" + api + "/containers/json?all=1")
		if err != nil {
			fail(err)
		}
		decode(resp, &cs)
		return len(cs)
	}
	measure := func(proxied *http.Client) {
		for _, p := range paths {
			d, q := alternate(direct, proxied, p.path, requests)
			proxyRow(p.name, q, d)
		}
	}
	fmt.Printf("  read cache warm (served from memory between events; the daemon lists %d containers)\n", listed())
	measure(warm)
	fmt.Println("  read cache bypassed (CORNUS_DOCKERAPI_CACHE=off: every request reaches dockerd)")
	measure(off)

	// Churn: 10 running containers with a healthcheck every second; each
	// check is several container events (exec_create, exec_start, exec_die,
	// health_status), and every event drops the whole cache.
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "churn.yaml", "-p", "bench-churn", "up", "-d")
	defer b.must(b.cornus, "compose", "--progress", "quiet", "-f", "churn.yaml", "-p", "bench-churn", "down", "-t", "0")
	time.Sleep(2 * time.Second) // healthchecks under way
	stopCount := countEvents(dockerSock, api)
	start := time.Now()
	fmt.Printf("  under churn (read cache on; 10 more containers with 1s healthchecks; the daemon lists %d)\n", listed())
	measure(warm)
	n := stopCount()
	fmt.Printf("    (dockerd sent %.0f container events/s while measuring: each one invalidates the cache)\n", float64(n)/time.Since(start).Seconds())
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

// alternate times requests GETs of path on both clients, alternating which
// goes first so drift affects both.
func alternate(direct, proxied *http.Client, path string, requests int) (d, p []time.Duration) {
	for i := range requests {
		first, second := direct, proxied
		if i%2 == 1 {
			first, second = proxied, direct
		}
		t1, t2 := timeGet(first, path), timeGet(second, path)
		if i%2 == 1 {
			t1, t2 = t2, t1
		}
		d, p = append(d, t1), append(p, t2)
	}
	return d, p
}

func proxyRow(name string, p, d []time.Duration) {
	mp, md := median(p), median(d)
	ratio := float64(mp) / float64(md)
	verdict := "meets"
	if ratio > 1.15 {
		verdict = "MISSES"
	}
	fmt.Printf("    %-27s proxy %6.3f ms   dockerd %6.3f ms   ratio %.2fx (target <= 1.15x: %s)\n", name, ms(mp), ms(md), ratio, verdict)
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
// stops counting and returns the count.
func countEvents(dockerSock, api string) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
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
			var m struct{ Type string }
			if dec.Decode(&m) != nil {
				return
			}
			n++
		}
	}()
	return func() int { cancel(); <-done; return n }
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

func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
}

func timeGet(c *http.Client, path string) time.Duration {
	start := time.Now()
	resp, err := c.Get("http://d" + path)
	if err != nil {
		fail(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		fail(fmt.Errorf("GET %s: %s", path, resp.Status))
	}
	return time.Since(start)
}
