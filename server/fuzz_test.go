package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// emptyBackend has nothing and makes nothing: the fuzz target below
// drives every route's decoding and checks over it, no daemon needed.
type emptyBackend struct{}

var errEmpty = errdefs.ErrUnavailable

func (emptyBackend) Name() string                        { return "empty" }
func (emptyBackend) Capabilities() backends.Capabilities { return backends.Capabilities{} }
func (emptyBackend) Create(context.Context, backends.ContainerSpec) (backends.Container, error) {
	return backends.Container{}, errEmpty
}
func (emptyBackend) Start(context.Context, string) error                          { return errEmpty }
func (emptyBackend) Stop(context.Context, string, backends.StopOptions) error     { return errEmpty }
func (emptyBackend) Remove(context.Context, string, backends.RemoveOptions) error { return errEmpty }
func (emptyBackend) List(context.Context, backends.ListOptions) ([]backends.Container, error) {
	return nil, nil
}
func (emptyBackend) Inspect(context.Context, string) (backends.ContainerDetails, error) {
	return backends.ContainerDetails{}, errdefs.ErrNotFound
}
func (emptyBackend) Wait(context.Context, string) (int, error)               { return 0, errEmpty }
func (emptyBackend) Logs(context.Context, string, backends.LogOptions) error { return errEmpty }
func (emptyBackend) Exec(context.Context, string, backends.ExecOptions) (int, error) {
	return 0, errEmpty
}
func (emptyBackend) EnsureVolume(context.Context, backends.VolumeSpec) (backends.Volume, error) {
	return backends.Volume{}, errEmpty
}
func (emptyBackend) ListVolumes(context.Context, backends.ListOptions) ([]backends.Volume, error) {
	return nil, nil
}
func (emptyBackend) RemoveVolume(context.Context, string, bool) error { return errEmpty }
func (emptyBackend) Close() error                                     { return nil }

// Every route's body, fuzzed, as a tenant: no panic, no 5xx but the
// backend's own refusal (503), and no answer that holds a token.
func FuzzRouteBodies(f *testing.F) {
	dir := f.TempDir()
	tokens := filepath.Join(dir, "tokens")
	tok, err := AddClientToken(tokens, "alice", "")
	if err != nil {
		f.Fatal(err)
	}
	srv, err := New(context.Background(), emptyBackend{}, Config{DataDir: filepath.Join(dir, "data"), TokensFile: tokens})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
	h := srv.Handler()
	for _, seed := range []string{
		`{"spec":{"name":"p","services":{"app":{"image":"x"}}}}`,
		`{"spec":{"name":"p","services":{"app":{"image":"x","secrets":[{"name":"s","file":"/etc/shadow"}]}}}}`,
		`{"spec":{"name":"p","services":{"app":{"image":"x","networkMode":"container:other"}}},"localMounts":[{"index":0,"service":"app","target":"/w","file":"../x"}]}`,
		`{"tenant":"bob"}`, `{"services":["app"],"signal":"KILL","timeout":1}`, `{}`, `[]`, `null`, ``,
	} {
		for i := range Routes() {
			f.Add(i, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, route int, body []byte) {
		routes := Routes()
		method, path, _ := strings.Cut(routes[(route%len(routes)+len(routes))%len(routes)], " ")
		if strings.HasSuffix(path, "/exec") || strings.HasSuffix(path, "/run") || strings.HasSuffix(path, "/attach-stdio") || strings.Contains(path, "/session") || strings.Contains(path, "/relay") {
			return // WebSocket routes: their first message is fuzzed by their own tests
		}
		path = strings.ReplaceAll(path, "{project}", "p")
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable && res.StatusCode != http.StatusNotImplemented {
			t.Fatalf("%s %s with %q: %d %s", method, path, body, res.StatusCode, out)
		}
		if bytes.Contains(out, []byte(tok)) {
			t.Fatal("an answer holds the token")
		}
	})
}
