package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
)

// The registry rows (issue 25): cornus serve's registry against
// distribution's registry (the reference, built from the Go module proxy
// by scripts/distribution.sh) on the same machine, with the same client:
//
//	push and pull of a 200 MB one-layer image, cornus serve on the
//	containerd backend (its store is containerd's content store), medians;
//	20 concurrent pulls of it from cornus serve: errors (target 0);
//	cornus serve's resident memory while a 1 GB layer is pushed and
//	pulled: its peak over the baseline (target: flat, under 64 MiB).

const (
	imageBytes = 200 << 20
	hugeBytes  = 1 << 30
)

// registryRows runs the registry rows against the reference binary.
func (b bench) registryRows(reference string, runs int) {
	ref := startDistribution(reference, filepath.Join(b.dir, "distribution"))
	defer ref.stop()
	cornus := b.startRegistryServer()
	defer cornus.stop()

	layer := filepath.Join(b.dir, "layer.bin")
	d := randomFile(layer, imageBytes)
	var pushC, pullC, pushR, pullR []time.Duration
	for i := range runs {
		for _, r := range rotate(i, []*registryEnd{cornus, ref}) {
			repo := fmt.Sprintf("bench/img%d", i)
			push, pull := r.pushPull(repo, layer, d, imageBytes)
			if r == cornus {
				pushC, pullC = append(pushC, push), append(pullC, pull)
			} else {
				pushR, pullR = append(pushR, push), append(pullR, pull)
			}
			r.delete(repo, d)
		}
	}
	fmt.Printf("cornus serve's registry (containerd store) vs distribution %s, a 200 MB image, %d runs each, medians [min–max]:\n\n", filepath.Base(filepath.Dir(reference)), runs)
	pair("push 200 MB", "cornus", pushC, "distribution", pushR, 1.2)
	pair("pull 200 MB", "cornus", pullC, "distribution", pullR, 1.2)

	cornus.push("bench/shared", layer, d, imageBytes)
	errs := cornus.concurrentPulls("bench/shared", d, imageBytes, 20)
	fmt.Printf("  %-22s %d errors of 20 (target 0: %s)\n", "20 concurrent pulls", errs, map[bool]string{true: "meets", false: "MISSES"}[errs == 0])
	cornus.delete("bench/shared", d)

	huge := filepath.Join(b.dir, "huge.bin")
	hd := randomFile(huge, hugeBytes)
	must(os.Remove(layer))
	base := rss(cornus.pid())
	peak := base
	stop := sampleRSS(cornus.pid(), &peak)
	cornus.pushPull("bench/huge", huge, hd, hugeBytes)
	stop()
	cornus.delete("bench/huge", hd)
	growth := float64(peak-base) / (1 << 20)
	fmt.Printf("  %-22s cornus serve %6.0f MiB resident, peak +%.0f MiB while a 1 GB layer was pushed and pulled (target < 64 MiB: %s)\n",
		"memory, 1 GB layer", float64(base)/(1<<20), growth, map[bool]string{true: "meets", false: "MISSES"}[growth < 64])
}

func rotate(i int, ends []*registryEnd) []*registryEnd {
	if i%2 == 1 {
		return []*registryEnd{ends[1], ends[0]}
	}
	return ends
}

// registryEnd is a registry the bench talks to.
type registryEnd struct {
	base  string // http://127.0.0.1:PORT
	token string // "": anonymous
	cmd   *exec.Cmd
}

func (r *registryEnd) pid() int { return r.cmd.Process.Pid }

func (r *registryEnd) stop() {
	_ = r.cmd.Process.Signal(os.Interrupt)
	_ = r.cmd.Wait()
}

// startDistribution runs distribution's registry on a free port, storing
// under dir.
func startDistribution(bin, dir string) *registryEnd {
	addr := freeAddr("127.0.0.1")
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", dir, addr)
	path := dir + ".yaml"
	must(os.WriteFile(path, []byte(cfg), 0o644))
	cmd := exec.Command(bin, "serve", path)
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	must(cmd.Start())
	r := &registryEnd{base: "http://" + addr, cmd: cmd}
	r.waitReady()
	return r
}

// startRegistryServer runs cornus serve on the containerd backend.
func (b bench) startRegistryServer() *registryEnd {
	data := filepath.Join(b.dir, "registry-data")
	tok := strings.TrimSpace(b.out(b.cornus, "token", "create", "--tokens-file", filepath.Join(data, "tokens"), "bench"))
	cmd := exec.Command(b.cornus, "serve", "--listen", "127.0.0.1:0", "--tokens-file", filepath.Join(data, "tokens"))
	cmd.Env = append(os.Environ(), "CORNUS_DATA_DIR="+data, "CORNUS_DEPLOY_BACKEND=containerd", "CORNUS_CONTAINERD_ADDRESS=/run/cornus-containerd/containerd.sock")
	stderr, _ := cmd.StderrPipe()
	must(cmd.Start())
	r := &registryEnd{base: serverURLFrom(stderr), token: tok, cmd: cmd}
	r.waitReady()
	return r
}

// freeAddr is ip:port with a port free on ip right now.
func freeAddr(ip string) string {
	l, err := net.Listen("tcp", ip+":0")
	must(err)
	defer l.Close()
	return l.Addr().String()
}

func (r *registryEnd) waitReady() {
	for i := 0; ; i++ {
		if code, _, _ := r.do("GET", "/v2/", nil, -1, nil); code == http.StatusOK {
			return
		}
		if i > 100 {
			fail(fmt.Errorf("registry %s did not answer", r.base))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// do sends a request (body of size bytes, -1 for none) and returns the
// status, headers and, for small answers, the body; out receives a
// streamed answer.
func (r *registryEnd) do(method, path string, body io.Reader, size int64, out io.Writer, hdr ...string) (int, http.Header, []byte) {
	url := path
	if !strings.HasPrefix(path, "http") {
		url = r.base + path
	}
	req, err := http.NewRequest(method, url, body)
	must(err)
	if size >= 0 {
		req.ContentLength = size
	}
	if r.token != "" {
		req.SetBasicAuth("bench", r.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if _, err := io.Copy(out, resp.Body); err != nil {
			return 0, nil, []byte(err.Error())
		}
		return resp.StatusCode, resp.Header, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header, data
}

// push uploads the layer (monolithic: POST, then PUT with the bytes), a
// config and the manifest of repo:1.
func (r *registryEnd) push(repo, layer string, d digest.Digest, size int64) {
	r.putBlob(repo, d, size, func() io.Reader { f, err := os.Open(layer); must(err); return f })
	cfg := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["` + d.String() + `"]}}`)
	cd := digest.FromBytes(cfg)
	r.putBlob(repo, cd, int64(len(cfg)), func() io.Reader { return bytes.NewReader(cfg) })
	m, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": len(cfg)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": d, "size": size}}})
	must(err)
	if code, _, body := r.do("PUT", "/v2/"+repo+"/manifests/1", bytes.NewReader(m), int64(len(m)), nil, "Content-Type", "application/vnd.oci.image.manifest.v1+json"); code != http.StatusCreated {
		fail(fmt.Errorf("push manifest to %s: %d %s", r.base, code, body))
	}
}

func (r *registryEnd) putBlob(repo string, d digest.Digest, size int64, open func() io.Reader) {
	code, hdr, body := r.do("POST", "/v2/"+repo+"/blobs/uploads/", nil, 0, nil)
	if code != http.StatusAccepted {
		fail(fmt.Errorf("start an upload to %s: %d %s", r.base, code, body))
	}
	loc := hdr.Get("Location")
	if !strings.HasPrefix(loc, "http") {
		loc = r.base + loc
	}
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	src := open()
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	if code, _, body := r.do("PUT", loc+sep+"digest="+d.String(), src, size, nil, "Content-Type", "application/octet-stream"); code != http.StatusCreated {
		fail(fmt.Errorf("upload to %s: %d %s", r.base, code, body))
	}
}

// pull reads repo:1's manifest and its layer, checking the digest.
func (r *registryEnd) pull(repo string, d digest.Digest, size int64) error {
	if code, _, body := r.do("GET", "/v2/"+repo+"/manifests/1", nil, -1, nil, "Accept", "application/vnd.oci.image.manifest.v1+json"); code != http.StatusOK {
		return fmt.Errorf("pull manifest from %s: %d %s", r.base, code, body)
	}
	v := d.Verifier()
	n := &counter{w: v}
	if code, _, body := r.do("GET", "/v2/"+repo+"/blobs/"+d.String(), nil, -1, n); code != http.StatusOK {
		return fmt.Errorf("pull layer from %s: %d %s", r.base, code, body)
	}
	if n.n != size || !v.Verified() {
		return fmt.Errorf("pull layer from %s: %d bytes, digest verified %v", r.base, n.n, v.Verified())
	}
	return nil
}

func (r *registryEnd) pushPull(repo, layer string, d digest.Digest, size int64) (push, pull time.Duration) {
	start := time.Now()
	r.push(repo, layer, d, size)
	push = time.Since(start)
	start = time.Now()
	must(r.pull(repo, d, size))
	return push, time.Since(start)
}

// delete removes repo:1 and its layer (so the next push uploads again).
func (r *registryEnd) delete(repo string, d digest.Digest) {
	_, hdr, _ := r.do("HEAD", "/v2/"+repo+"/manifests/1", nil, -1, nil, "Accept", "application/vnd.oci.image.manifest.v1+json")
	if m := hdr.Get("Docker-Content-Digest"); m != "" {
		r.do("DELETE", "/v2/"+repo+"/manifests/"+m, nil, -1, nil)
	}
	r.do("DELETE", "/v2/"+repo+"/blobs/"+d.String(), nil, -1, nil)
}

func (r *registryEnd) concurrentPulls(repo string, d digest.Digest, size int64, n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := 0
	for range n {
		wg.Go(func() {
			if err := r.pull(repo, d, size); err != nil {
				fmt.Fprintln(os.Stderr, "concurrent pull:", err)
				mu.Lock()
				errs++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// randomFile writes size random bytes to path and returns their digest.
func randomFile(path string, size int64) digest.Digest {
	f, err := os.Create(path)
	must(err)
	defer f.Close()
	dg := digest.SHA256.Digester()
	_, err = io.CopyN(io.MultiWriter(f, dg.Hash()), rand.Reader, size)
	must(err)
	return dg.Digest()
}

// rss is a process's resident memory in bytes.
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			must(err)
			return kb << 10
		}
	}
	return 0
}

// sampleRSS records pid's peak resident memory every 50 ms until stopped.
func sampleRSS(pid int, peak *int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if v := rss(pid); v > *peak {
				*peak = v
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
