package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// serveRows measures cornus serve (issue 11) on the default backend:
// the 10-service project's up -d + down through the server against the
// same done locally, and port-forward throughput against the same
// download through the container's published port.
func (b bench) serveRows(image string, runs int) {
	data := filepath.Join(b.dir, "serve-data")
	tok := strings.TrimSpace(b.out(b.cornus, "token", "create", "--tokens-file", filepath.Join(data, "tokens"), "bench"))
	srv := exec.Command(b.cornus, "serve", "--listen", "127.0.0.1:0", "--tokens-file", filepath.Join(data, "tokens"))
	srv.Env = append(os.Environ(), "CORNUS_DATA_DIR="+data)
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		fail(err)
	}
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	url := serverURLFrom(stderr)
	remote := []string{"CORNUS_SERVER=" + url, "CORNUS_TOKEN=" + tok}
	ten := func(env []string, project string, verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", project}, verb...)...)
		return time.Since(start)
	}
	defer b.bestEffort(nil, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-local", "down", "-t", "1")
	defer b.bestEffort(remote, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-srv", "down", "-t", "1")
	ten(remote, "bench-srv", "up", "-d")
	ten(remote, "bench-srv", "down", "-t", "1")
	docker := unixClient(b.docker)
	api := apiVersion(docker)
	var upS, downS, upL, downL []time.Duration
	for i := range runs {
		remoteRun := func() {
			upS = append(upS, ten(remote, "bench-srv", "up", "-d"))
			expectRunning("up -d through cornus serve", runningOnDockerd(docker, api, "bench-srv"), 10)
			downS = append(downS, ten(remote, "bench-srv", "down", "-t", "1"))
		}
		localRun := func() {
			upL = append(upL, ten(nil, "bench-local", "up", "-d"))
			expectRunning("local up -d", runningOnDockerd(docker, api, "bench-local"), 10)
			downL = append(downL, ten(nil, "bench-local", "down", "-t", "1"))
		}
		if i%2 == 0 {
			remoteRun()
			localRun()
		} else {
			localRun()
			remoteRun()
		}
	}
	fmt.Printf("cornus serve on loopback vs local cornus (same backend), %d runs each, medians [min–max]:\n\n", runs)
	pair("up -d (10 services)", "server", upS, "local", upL, 1.1)
	pair("down (10 services)", "server", downS, "local", downL, 1.1)

	// Throughput: a 64 MiB download from httpd in a container.
	const size = 64 << 20
	compose := fmt.Sprintf("services:\n  big:\n    image: %s\n    ports: [\"127.0.0.1:18481:8080\"]\n    command: [\"sh\", \"-c\", \"mkdir -p /w && dd if=/dev/zero of=/w/big bs=1M count=64 2>/dev/null && exec httpd -f -p 8080 -h /w\"]\n", image)
	if err := b.write("big.yaml", compose); err != nil {
		fail(err)
	}
	b.mustEnv(remote, b.cornus, "compose", "--progress", "quiet", "-f", "big.yaml", "-p", "bench-pf", "up", "-d")
	defer b.mustEnv(remote, b.cornus, "compose", "--progress", "quiet", "-f", "big.yaml", "-p", "bench-pf", "down", "-t", "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pf := exec.CommandContext(ctx, b.cornus, "port-forward", "-p", "bench-pf", "big", "18482:8080")
	pf.Env, pf.Dir = append(os.Environ(), remote...), b.dir
	if err := pf.Start(); err != nil {
		fail(err)
	}
	defer func() { cancel(); _ = pf.Wait() }()
	var viaPF, direct []time.Duration
	for range runs {
		viaPF = append(viaPF, download("http://127.0.0.1:18482/big", size))
		direct = append(direct, download("http://127.0.0.1:18481/big", size))
	}
	mbps := func(d time.Duration) float64 { return float64(size) / (1 << 20) / d.Seconds() }
	rf, rd := mbps(median(viaPF)), mbps(median(direct))
	fmt.Printf("  %-22s port-forward %7.0f MiB/s   published port %7.0f MiB/s   ratio %.2fx (target >= 0.7x: %s)\n",
		"64 MiB download", rf, rd, rf/rd, map[bool]string{true: "meets", false: "MISSES"}[rf/rd >= 0.7])
}

// pair prints a ratio row between two named runs.
func pair(name, an string, a []time.Duration, bn string, b []time.Duration, target float64) {
	ma, mb := median(a), median(b)
	r := float64(ma) / float64(mb)
	fmt.Printf("  %-22s %s %7.1f ms %s   %s %7.1f ms %s   ratio %.2fx (target <= %.1fx: %s)\n", name, an, ms(ma), spread(a), bn, ms(mb), spread(b), r, target, verdict(r, target))
}

// download fetches url (retrying while the listener comes up) and checks
// it read size bytes.
func download(url string, size int64) time.Duration {
	for i := 0; ; i++ {
		start := time.Now()
		resp, err := http.Get(url)
		if err == nil {
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && n == size {
				return time.Since(start)
			}
		}
		if i > 50 {
			fail(fmt.Errorf("download %s: %v", url, err))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serverURLFrom reads cornus serve's log until its "serving" line.
func serverURLFrom(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var l struct{ Msg, URL string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "serving" {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return l.URL
		}
	}
	fail(fmt.Errorf("cornus serve did not start"))
	return ""
}
