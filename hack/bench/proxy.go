package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/dockerapi"
)

// proxyLatency compares median request latency through the Docker API
// proxy (in this process, over the dockerhost backend) with dockerd
// directly, for GET /containers/json and GET /containers/{id}/json.
func proxyLatency(dir, image string, requests int) {
	ctx := context.Background()
	b, err := dockerhost.New(ctx, dockerhost.WithEnviron(os.Environ()))
	if err != nil {
		fail(err)
	}
	defer b.Close()
	sock := filepath.Join(dir, "proxy.sock")
	l, err := dockerapi.Listen("unix://" + sock)
	if err != nil {
		fail(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = dockerapi.New(b).Serve(sctx, l) }()

	direct := unixClient(strings.TrimPrefix(dockerhost.HostFromEnv(os.Environ()), "unix://"))
	proxied := unixClient(sock)
	// A few containers so the list is not empty.
	var ids []string
	for i := range 5 {
		body := fmt.Sprintf(`{"Image":%q,"Cmd":["sleep","600"],"Labels":{"cornus.bench":"proxy"}}`, image)
		resp, err := direct.Post(fmt.Sprintf("http://d/v1.41/containers/create?name=bench-proxy-%d", i), "application/json", strings.NewReader(body))
		if err != nil {
			fail(err)
		}
		var out struct{ Id string }
		decode(resp, &out)
		ids = append(ids, out.Id)
	}
	defer func() {
		for _, id := range ids {
			req, _ := http.NewRequest(http.MethodDelete, "http://d/v1.41/containers/"+id+"?force=1", nil)
			if resp, err := direct.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}()
	for _, path := range []string{"/v1.41/containers/json?all=1", "/v1.41/containers/" + ids[0] + "/json"} {
		var d, p []time.Duration
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
		name := "GET /containers/json"
		if strings.Contains(path, ids[0]) {
			name = "GET /containers/{id}/json"
		}
		md, mp := median(d), median(p)
		ratio := float64(mp) / float64(md)
		verdict := "meets"
		if ratio > 1.15 {
			verdict = "MISSES"
		}
		fmt.Printf("  %-27s proxy %6.3f ms   dockerd %6.3f ms   ratio %.2fx (target <= 1.15x: %s)\n", name, ms(mp), ms(md), ratio, verdict)
	}
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
