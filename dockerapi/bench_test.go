package dockerapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// BenchmarkReads measures the proxy's reads with the cache off against
// dockerd's own, on the same daemon, for the profile behind issue 29's
// proxy rows (go test ./dockerapi -run '^$' -bench Reads -cpuprofile):
// GET /containers/json and one container's inspect.
func BenchmarkReads(b *testing.B) {
	ts := newTestServer(b, WithReadCache(false))
	ctx := context.Background()
	var id string
	for i := range 5 {
		c, err := ts.b.Create(ctx, backends.ContainerSpec{Name: fmt.Sprintf("%s-%d", ts.label, i), Image: testImage,
			Command: []string{"sleep", "600"}, Labels: map[string]string{"cornus.test": ts.label}})
		if err != nil {
			b.Fatal(err)
		}
		id = c.ID
	}
	direct := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", "/var/run/docker.sock")
	}}}
	// The floor of any proxy: net/http's reverse proxy, passing bytes.
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "d" }, Transport: direct.Transport}
	fsock := filepath.Join(b.TempDir(), "floor.sock")
	fl, err := net.Listen("unix", fsock)
	if err != nil {
		b.Fatal(err)
	}
	fsrv := &http.Server{Handler: rp}
	go fsrv.Serve(fl) //nolint:errcheck // ends with Close
	defer fsrv.Close()
	floor := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", fsock)
	}}}
	for _, r := range []struct{ name, path string }{{"list", "/v1.41/containers/json?all=1"}, {"inspect", "/v1.41/containers/" + id + "/json"}} {
		for _, via := range []struct {
			name string
			c    *http.Client
		}{{"dockerd", direct}, {"floor", floor}, {"proxy", ts.client}} {
			b.Run(r.name+"/"+via.name, func(b *testing.B) {
				for b.Loop() {
					resp, err := via.c.Get("http://d" + r.path)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, resp.Body); err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("%s: %s", r.path, resp.Status)
					}
				}
			})
		}
	}
}
