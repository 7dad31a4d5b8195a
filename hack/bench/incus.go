package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// defaultIncusSocket is where scripts/incus.sh's incusd listens.
const defaultIncusSocket = "/var/lib/incus/unix.socket"

// incusAnswers reports whether incusd answers on sock (GET /1.0), so
// that make bench adds the incus rows only then.
func incusAnswers(sock string) bool {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://incus/1.0", nil)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// incusRows times up -d --wait and down of the 10-service project with
// cornus on the incus backend, beside docker compose on dockerd (the
// medians measured above, same run; upD and downD may be nil with -only
// incus), and a second image load: cornus converts an image for Incus
// once, so loading it again only checks Incus has it.
func (b bench) incusRows(image, sock string, runs int, upD, downD []time.Duration) {
	env := []string{"CORNUS_DEPLOY_BACKEND=incus", "CORNUS_INCUS_SOCKET=" + sock,
		"CORNUS_DATA_DIR=" + filepath.Join(b.dir, "incus-data")}
	var tar bytes.Buffer
	if err := testimage.BuildBusybox(&tar, testimage.Options{Ref: image}); err != nil {
		fail(err)
	}
	path := filepath.Join(b.dir, "incus-image.tar")
	if err := os.WriteFile(path, tar.Bytes(), 0o644); err != nil {
		fail(err)
	}
	load := func() time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, "image", "load", "-i", path)
		return time.Since(start)
	}
	first := load()
	cornus := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-inc"}, verb...)...)
		return time.Since(start)
	}
	defer b.bestEffort(env, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-inc", "down", "-t", "1")
	// Warm (networks, page cache), then clean.
	cornus("up", "-d", "--wait")
	cornus("down", "-t", "1")
	var upC, downC, loadC []time.Duration
	for range runs {
		upC = append(upC, cornus("up", "-d", "--wait"))
		expectRunning("cornus up -d --wait on incus", runningOnIncus(sock, "bench-inc"), 10)
		downC = append(downC, cornus("down", "-t", "1"))
		loadC = append(loadC, load())
	}
	vs := ""
	if len(upD) > 0 {
		vs = " vs docker compose on dockerd (same run)"
	}
	fmt.Printf("cornus on incus%s, %d runs each, medians [min–max]; after each up, incusd runs all ten:\n\n", vs, runs)
	incusRow("up -d --wait (10 svcs)", upC, upD)
	incusRow("down (10 services)", downC, downD)
	fmt.Printf("  %-22s cornus %8.1f ms first (converted, or found in Incus already), again %8.1f ms %s (cached: no conversion)\n",
		"image load", ms(first), ms(median(loadC)), spread(loadC))
}

// incusRow shows cornus on incus with docker compose on dockerd beside it
// for scale (no target: the runtimes differ), when that was measured.
func incusRow(name string, c, d []time.Duration) {
	fmt.Printf("  %-22s cornus %8.1f ms %s", name, ms(median(c)), spread(c))
	if len(d) > 0 {
		fmt.Printf("   compose on dockerd %8.1f ms %s   ratio %.2fx", ms(median(d)), spread(d), float64(median(c))/float64(median(d)))
	}
	fmt.Println()
}
