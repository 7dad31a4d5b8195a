package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/internal/testimage"
)

// defaultPodmanSocket is the service scripts/podman.sh runs.
const defaultPodmanSocket = "/run/cornus-podman/podman.sock"

// podmanAnswers reports whether a podman service answers on sock (the
// libpod ping), so that make bench adds the podman rows only then.
func podmanAnswers(sock string) bool {
	c := podmanClient(sock)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://podman/v5.0.0/libpod/_ping", nil)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func podmanClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// podmanRows times up -d, ps and down of the 10-service project with
// cornus on the podman backend against podman-compose (Debian's 1.0.3,
// which drives the podman CLI, here in remote mode) on the same podman
// service, in the same run, alternating which goes first. Both load the
// Compose file for ps (podman-compose always does); after each up, podman
// must run all ten containers.
func (b bench) podmanRows(image, sock string, runs int) {
	pc, err := exec.LookPath("podman-compose")
	if err != nil {
		fmt.Printf("podman rows skipped: podman-compose is not installed (scripts/podman.sh installs it)\n")
		return
	}
	env := []string{"CORNUS_DEPLOY_BACKEND=podman", "CORNUS_PODMAN_SOCKET=unix://" + sock,
		"CORNUS_DATA_DIR=" + filepath.Join(b.dir, "podman-data")}
	b.podmanImage(image, sock, env)
	// podman-compose runs `podman`; CONTAINER_HOST makes that the remote
	// client of the same service.
	peerEnv := []string{"CONTAINER_HOST=unix://" + sock}
	cornus := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-pm"}, verb...)...)
		return time.Since(start)
	}
	peer := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(peerEnv, pc, append([]string{"-f", "ten.yaml", "-p", "bench-pc"}, verb...)...)
		return time.Since(start)
	}
	// podman-compose's down leaves its project's network.
	peerNet := func() { b.removePodmanNetwork(sock, "bench-pc_default") }
	peerNet()
	defer peerNet()
	defer b.bestEffort(peerEnv, pc, "-f", "ten.yaml", "-p", "bench-pc", "down")
	defer b.bestEffort(env, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-pm", "down")
	// Warm both (image, networks, page cache), then clean.
	cornus("up", "-d")
	cornus("down")
	peer("up", "-d")
	peer("down")
	var upC, psC, downC, upP, psP, downP []time.Duration
	tools := []func(){
		func() {
			upC = append(upC, cornus("up", "-d"))
			b.expectPodman(sock, "bench-pm", 10)
			t, _ := b.psLoaded(env, b.cornus, "compose", "ten.yaml", "bench-pm")
			psC = append(psC, t)
			downC = append(downC, cornus("down"))
		},
		func() {
			upP = append(upP, peer("up", "-d"))
			b.expectPodman(sock, "bench-pc", 10)
			psP = append(psP, peer("ps"))
			downP = append(downP, peer("down"))
		},
	}
	for i := range runs {
		for k := range tools {
			tools[(i+k)%len(tools)]()
		}
	}
	version := strings.TrimSpace(b.outEnv(peerEnv, "podman", "version", "--format", "{{.Server.Version}}"))
	fmt.Printf("cornus on podman vs podman-compose on the same podman %s service, %d runs each, medians [min–max]:\n\n", version, runs)
	peerRow("up -d (10 services)", upC, upP)
	peerRow("ps (10 services)", psC, psP)
	peerRow("down (10 services)", downC, downP)
}

// peerRow shows cornus against podman-compose.
func peerRow(name string, c, p []time.Duration) {
	mc, mp := median(c), median(p)
	fmt.Printf("  %-22s cornus %8.1f ms %s   podman-compose %8.1f ms %s   ratio %.2fx\n",
		name, ms(mc), spread(c), ms(mp), spread(p), float64(mc)/float64(mp))
}

// expectPodman checks that a tool's up left n running containers of the
// project (podman-compose labels io.podman.compose.project, cornus
// com.docker.compose.project): a run that failed to start some is no
// measurement.
func (b bench) expectPodman(sock, project string, n int) {
	q := url.Values{"filters": {fmt.Sprintf(`{"label":["com.docker.compose.project=%s"],"status":["running"]}`, project)}}
	resp, err := podmanClient(sock).Get("http://podman/v5.0.0/libpod/containers/json?" + q.Encode())
	if err != nil {
		fail(err)
	}
	var list []struct{ ID string }
	decode(resp, &list)
	if len(list) != n {
		fail(fmt.Errorf("project %s: %d running containers on podman, want %d", project, len(list), n))
	}
}

// podmanImage makes sure the service has the bench image: built locally
// and loaded through cornus (no pulls), unless it is there.
func (b bench) podmanImage(image, sock string, env []string) {
	resp, err := podmanClient(sock).Get("http://podman/v5.0.0/libpod/images/" + url.PathEscape(image) + "/exists")
	if err != nil {
		fail(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return
	}
	var tar bytes.Buffer
	if err := testimage.BuildBusybox(&tar, testimage.Options{Ref: image}); err != nil {
		fail(err)
	}
	path := filepath.Join(b.dir, "podman-image.tar")
	if err := os.WriteFile(path, tar.Bytes(), 0o644); err != nil {
		fail(err)
	}
	b.mustEnv(env, b.cornus, "image", "load", "-i", path)
}

// removePodmanNetwork removes a network if it is there.
func (b bench) removePodmanNetwork(sock, name string) {
	req, _ := http.NewRequest(http.MethodDelete, "http://podman/v5.0.0/libpod/networks/"+url.PathEscape(name), nil)
	resp, err := podmanClient(sock).Do(req)
	if err != nil {
		fail(err)
	}
	resp.Body.Close()
}
