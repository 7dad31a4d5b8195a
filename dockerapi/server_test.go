package dockerapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/internal/testimage"
)

const testImage = "cornus-test/busybox:1"

// testServer serves the proxy over the real dockerd (via the dockerhost
// backend) on a unix socket, as `cornus daemon docker` does.
type testServer struct {
	t      testing.TB
	b      *dockerhost.Backend // the backend itself, behind the server's back
	srv    *Server
	client *http.Client
	label  string // unique label value marking what a test creates
}

func newTestServer(t testing.TB, opts ...Option) *testServer {
	t.Helper()
	return newTestServerOver(t, nil, opts...)
}

// newTestServerOver serves wrap(backend) when wrap is set (tests that
// alter what the server sees of the backend).
func newTestServerOver(t testing.TB, wrap func(backends.Backend) backends.Backend, opts ...Option) *testServer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := dockerhost.New(ctx, dockerhost.WithEnviron(os.Environ()))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("docker daemon required under CI: %v", err)
		}
		t.Skipf("docker daemon unreachable (start it with scripts/setup.sh): %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.InspectImage(ctx, testImage); errdefs.IsNotFound(err) {
		var buf bytes.Buffer
		if err := testimage.BuildBusybox(&buf, testimage.Options{Ref: testImage}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.LoadImage(ctx, &buf); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "d.sock")
	l, err := Listen("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	served := backends.Backend(b)
	if wrap != nil {
		served = wrap(b)
	}
	srv := New(served, opts...)
	go func() { _ = srv.Serve(sctx, l); close(done) }()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	ts := &testServer{t: t, b: b, srv: srv, client: &http.Client{Transport: tr, Timeout: time.Minute}, label: "dockerapi-test-" + hex.EncodeToString(id)}
	t.Cleanup(func() {
		cs, _ := b.List(context.Background(), backends.ListOptions{All: true, Labels: map[string]string{"cornus.test": ts.label}})
		for _, c := range cs {
			_ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true, Volumes: true})
		}
		tr.CloseIdleConnections()
		stop()
		<-done
	})
	return ts
}

// do sends a request and returns status and body.
func (ts *testServer) do(method, path, body string) (int, string, http.Header) {
	ts.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://cornus"+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// create makes a labelled container through the API and returns its ID.
func (ts *testServer) create(name, extra string) string {
	ts.t.Helper()
	body := `{"Image":"` + testImage + `","Cmd":["sleep","30"],"Labels":{"cornus.test":"` + ts.label + `"}` + extra + `}`
	status, resp, _ := ts.do("POST", "/v1.47/containers/create?name="+name, body)
	if status != http.StatusCreated {
		ts.t.Fatalf("create %s: %d %s", name, status, resp)
	}
	var r struct{ Id string }
	_ = json.Unmarshal([]byte(resp), &r)
	return r.Id
}

func message(body string) string {
	var m struct{ Message string }
	_ = json.Unmarshal([]byte(body), &m)
	return m.Message
}

// TestBadInput: each bad request gets the status and {"message"} shape
// dockerd answers with, so clients print sensible errors; nothing is left
// half-created (issue #4).
func TestBadInput(t *testing.T) {
	ts := newTestServer(t)
	name := ts.label + "-a"
	stopped := ts.create(name, "")
	running := ts.create(ts.label+"-r", "")
	if status, body, _ := ts.do("POST", "/containers/"+running+"/start", ""); status != 204 {
		t.Fatalf("start: %d %s", status, body)
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		msg                      string // prefix of the message
	}{
		{"malformed JSON", "POST", "/v1.47/containers/create", `{bad`, 400, "invalid JSON: invalid character 'b'"},
		{"no image", "POST", "/v1.47/containers/create", `{}`, 400, "Config cannot be empty in order to create a container"},
		{"missing image", "POST", "/v1.47/containers/create", `{"Image":"cornus-test/absent:1"}`, 404, "No such image: cornus-test/absent:1"},
		{"name conflict", "POST", "/v1.47/containers/create?name=" + name, `{"Image":"` + testImage + `"}`, 409, `Conflict. The container name "/` + name + `" is already in use by container "` + stopped + `"`},
		{"invalid name", "POST", "/v1.47/containers/create?name=-bad/name", `{"Image":"` + testImage + `"}`, 400, "Invalid container name (-bad/name)"},
		{"bad bind", "POST", "/v1.47/containers/create", `{"Image":"` + testImage + `","HostConfig":{"Binds":["/etc:/x:bogus"]}}`, 400, "invalid mode: bogus"},
		{"host bind refused", "POST", "/v1.47/containers/create", `{"Image":"` + testImage + `","HostConfig":{"Binds":["/etc:/x"]}}`, 403, "container "},
		{"privileged refused", "POST", "/v1.47/containers/create", `{"Image":"` + testImage + `","HostConfig":{"Privileged":true}}`, 403, "container "},
		{"exec on stopped", "POST", "/v1.47/containers/" + stopped + "/exec", `{"Cmd":["true"]}`, 409, "Container " + stopped + " is not running"},
		{"exec without command", "POST", "/v1.47/containers/" + stopped + "/exec", `{}`, 400, "No exec command specified"},
		{"no such container", "GET", "/v1.47/containers/nope-" + ts.label + "/json", "", 404, "No such container: nope-" + ts.label},
		{"no such exec", "GET", "/v1.47/exec/deadbeef/json", "", 404, "No such exec instance: deadbeef"},
		{"no such network", "GET", "/v1.47/networks/nope-" + ts.label, "", 404, "network nope-" + ts.label + " not found"},
		{"no such volume", "GET", "/v1.47/volumes/nope-" + ts.label, "", 404, "get nope-" + ts.label + ": no such volume"},
		{"bad filters", "GET", "/v1.47/containers/json?filters=%7Bbad", "", 400, "invalid filters"},
		{"kill stopped", "POST", "/v1.47/containers/" + stopped + "/kill", "", 409, "Cannot kill container"},
		{"remove running refused", "DELETE", "/v1.47/containers/" + running, "", 409, "You cannot remove a running container " + running},
		{"start running is not modified", "POST", "/v1.47/containers/" + running + "/start", "", 304, ""},
		{"stop stopped is not modified", "POST", "/v1.47/containers/" + stopped + "/stop", "", 304, ""},
		{"unknown endpoint", "GET", "/v1.47/bogus/endpoint", "", 404, "page not found: GET /bogus/endpoint"},
		{"swarm endpoint", "GET", "/v1.47/services", "", 501, "GET /services is not implemented by cornus"},
		{"build without a builder", "POST", "/v1.47/build", "", 501, "POST /build: this server builds no images"},
		{"version too new", "GET", "/v1.99/version", "", 400, "client version 1.99 is too new. Maximum supported API version is " + MaxAPIVersion},
		{"version too old", "GET", "/v1.10/version", "", 400, "client version 1.10 is too old. Minimum supported API version is 1.24"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, hdr := ts.do(c.method, c.path, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d (%s)", status, c.status, body)
			}
			if c.msg != "" && !strings.HasPrefix(message(body), c.msg) {
				t.Errorf("message %q, want prefix %q", message(body), c.msg)
			}
			if status >= 400 && hdr.Get("Content-Type") != "application/json" {
				t.Errorf("error content type %q", hdr.Get("Content-Type"))
			}
		})
	}
	// Nothing was half-created by the refused requests.
	cs, err := ts.b.List(context.Background(), backends.ListOptions{All: true, Labels: map[string]string{"cornus.test": ts.label}})
	if err != nil || len(cs) != 2 {
		t.Fatalf("left behind: %d containers (%v)", len(cs), err)
	}
}

// TestVersioning: versioned and unversioned paths, and the Engine's
// identifying headers on every answer.
func TestVersioning(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/_ping", "/v1.24/_ping", "/v1.41/_ping", "/v" + MaxAPIVersion + "/_ping"} {
		status, body, hdr := ts.do("GET", path, "")
		if status != 200 || body != "OK" || hdr.Get("Api-Version") != MaxAPIVersion || hdr.Get("Ostype") != "linux" || !strings.HasPrefix(hdr.Get("Server"), "cornus/") {
			t.Errorf("%s: %d %q %v", path, status, body, hdr)
		}
	}
	status, body, _ := ts.do("GET", "/version", "")
	var v struct{ APIVersion, MinAPIVersion, Os string }
	if err := json.Unmarshal([]byte(body), &v); status != 200 || err != nil || v.APIVersion != MaxAPIVersion || v.MinAPIVersion != MinAPIVersion || v.Os != "linux" {
		t.Errorf("version: %d %s", status, body)
	}
}

// TestInspectShape: what clients read from inspect is there — State with
// a real timestamp, Config (Image, Labels, Env, Cmd), NetworkSettings,
// Mounts, Created, Name — and compose labels round-trip into cornus's.
func TestInspectShape(t *testing.T) {
	ts := newTestServer(t)
	name := ts.label + "-i"
	id := ts.create(name, `,"Env":["A=1"],"Labels":{"cornus.test":"`+ts.label+`","com.docker.compose.project":"p`+ts.label+`","com.docker.compose.service":"web","com.docker.compose.container-number":"2"},"HostConfig":{"Binds":["v`+ts.label+`:/data"],"PortBindings":{"80/tcp":[{"HostIp":"127.0.0.1","HostPort":""}]}}`)
	t.Cleanup(func() {
		// The container must go before its volume can.
		ctx := context.Background()
		_ = ts.b.Remove(ctx, id, backends.RemoveOptions{Force: true})
		if err := ts.b.RemoveVolume(ctx, "v"+ts.label, true); err != nil {
			t.Errorf("remove volume: %v", err)
		}
	})
	if status, body, _ := ts.do("POST", "/containers/"+id+"/start", ""); status != 204 {
		t.Fatalf("start: %d %s", status, body)
	}
	status, body, _ := ts.do("GET", "/v1.47/containers/"+name+"/json", "")
	if status != 200 {
		t.Fatalf("inspect: %d %s", status, body)
	}
	var got struct {
		Id, Name, Created, Image string
		State                    struct {
			Status    string
			Running   bool
			StartedAt string
		}
		Config struct {
			Image  string
			Labels map[string]string
			Env    []string
			Cmd    []string
		}
		NetworkSettings struct {
			Ports    map[string][]struct{ HostIp, HostPort string }
			Networks map[string]struct{ IPAddress, NetworkID string }
		}
		Mounts []struct{ Type, Name, Destination string }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	created, err := time.Parse(time.RFC3339Nano, got.Created)
	if err != nil || time.Since(created) > time.Hour {
		t.Errorf("Created %q is not a real timestamp", got.Created)
	}
	if got.Id != id || got.Name != "/"+name || !got.State.Running || got.State.Status != "running" || !strings.HasPrefix(got.Image, "sha256:") {
		t.Errorf("identity/state: %+v", got)
	}
	if got.Config.Image != testImage || got.Config.Labels["cornus.project"] != "p"+ts.label || got.Config.Labels["cornus.app"] != "web" || got.Config.Labels["cornus.replica"] != "2" {
		t.Errorf("config/labels: %+v", got.Config)
	}
	if len(got.NetworkSettings.Ports["80/tcp"]) != 1 || got.NetworkSettings.Ports["80/tcp"][0].HostPort == "" || got.NetworkSettings.Networks["bridge"].IPAddress == "" {
		t.Errorf("network settings: %+v", got.NetworkSettings)
	}
	if len(got.Mounts) != 1 || got.Mounts[0].Type != "volume" || got.Mounts[0].Name != "v"+ts.label || got.Mounts[0].Destination != "/data" {
		t.Errorf("mounts: %+v", got.Mounts)
	}
}
