package dockerapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/hostpolicy"
)

// TestBuildOptions: POST /build's query as docker build and docker
// compose send it, and the bad values refused with a message naming them.
func TestBuildOptions(t *testing.T) {
	q, _ := url.ParseQuery(`dockerfile=docker/app.Dockerfile&t=a:1&t=b&target=run&nocache=1&pull=1&buildargs={"A":"1","UNSET":null}&labels={"l":"v"}&networkmode=none&extrahosts=db:10.0.0.2&shmsize=1024&cachefrom=["c:1"]`)
	b, tags, err := buildOptions(q)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dockerfile != "docker/app.Dockerfile" || b.Target != "run" || !b.NoCache || !b.Pull || b.Args["A"] != "1" || len(b.Args) != 1 ||
		b.Labels["l"] != "v" || b.Network != "none" || b.ExtraHosts["db"][0] != "10.0.0.2" || b.ShmSize != 1024 || b.CacheFrom[0] != "c:1" ||
		strings.Join(tags, ",") != "a:1,b" {
		t.Fatalf("got %+v %v", b, tags)
	}
	for query, want := range map[string]string{
		"dockerfile=../../etc/passwd":               "dockerfile must be a path inside the context",
		"dockerfile=/etc/passwd":                    "dockerfile must be a path inside the context",
		"networkmode=container:x":                   `networkmode "container:x"`,
		"extrahosts=nocolon":                        `extrahosts "nocolon"`,
		"buildargs={":                               "buildargs",
		"shmsize=-1":                                `shmsize "-1"`,
		`cachefrom=["type=local,src=/root/.cache"]`: "a local cache is a directory of the daemon's",
	} {
		q, _ := url.ParseQuery(query)
		if _, _, err := buildOptions(q); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an invalid-argument error saying %q, got %v", query, want, err)
		}
	}
}

// TestBuildHostPower: a build asking for the host's network is refused by
// the default policy before its context is read (403, naming the field
// and the variable), as every other front end refuses it.
func TestBuildHostPower(t *testing.T) {
	s := New(nil, WithBuilder(builder.New(nil, nil)))
	body := &countingReader{size: 1 << 20}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1.41/build?networkmode=host&t=x", body))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "build.network") || !strings.Contains(rec.Body.String(), hostpolicy.EnvAllowPrivileged) {
		t.Fatalf("want 403 naming build.network and %s, got %d %s", hostpolicy.EnvAllowPrivileged, rec.Code, rec.Body)
	}
	if n := body.read.Load(); n != 0 {
		t.Fatalf("the refused build read %d bytes of its context", n)
	}
}

// TestInsideContext: the Dockerfile's directory is resolved inside the
// uploaded context; a symlink the context holds that leads out of it (to
// a directory of the daemon's machine) is refused, one that stays in is
// followed.
func TestInsideContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": "/etc", "in": "sub", "up": "../"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, df := range []string{"out/passwd", "up/x/Dockerfile", "in/../out/passwd"} {
		if got, err := insideContext(dir, df); err == nil {
			t.Errorf("%s: resolved to %s, want a refusal", df, got)
		}
	}
	real, _ := filepath.EvalSymlinks(dir)
	for df, want := range map[string]string{"in/Dockerfile": filepath.Join(real, "sub", "Dockerfile"), "Dockerfile": filepath.Join(real, "Dockerfile"), "": ""} {
		if got, err := insideContext(dir, df); err != nil || got != want {
			t.Errorf("%s: got %q, %v; want %q", df, got, err, want)
		}
	}
}
