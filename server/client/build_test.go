package client

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// ask sends one build read to bf as the server would and returns the
// answer's error and the bytes that followed.
func ask(t *testing.T, bf buildFiles, b api.BuildOpen) (string, error) {
	t.Helper()
	srv, cli := net.Pipe()
	go func() {
		h, st, err := api.ReadHeader(cli)
		if err != nil {
			cli.Close()
			return
		}
		bf.serve(h, st)
	}()
	c, err := api.OpenStream(srv, api.StreamHeader{Op: api.OpBuild, Build: &b}, 5e9)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var r io.Reader = c
	if b.Kind == api.BuildOpenFile || b.Kind == api.BuildSecret {
		r = &api.ChunkReader{R: c} // contents come whole, or say they are not
	}
	data, err := io.ReadAll(r)
	return string(data), err
}

// TestBuildFilesServeOnlyTheBuild: a server can read, through a client,
// the directories, secrets and files the build it was asked for names,
// and nothing else of the client's (issue 24 item 6: the client's files
// are the client's).
func TestBuildFilesServeOnlyTheBuild(t *testing.T) {
	ctxDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(t.TempDir(), "token")
	_ = os.WriteFile(secretFile, []byte("s3cret"), 0o600)
	b := spec.Build{Context: ctxDir, Secrets: []spec.BuildSecret{{ID: "tok", File: secretFile}}}
	bf := buildFiles{id: "b1", builds: []spec.Build{b}, dirs: buildDirs([]spec.Build{b}), files: builder.LocalFiles{}, sent: &Sent{}}

	if body, err := ask(t, bf, api.BuildOpen{Build: "b1", Kind: api.BuildOpenFile, Dir: ctxDir, Path: "Dockerfile"}); err != nil || body != "FROM scratch\n" {
		t.Fatalf("the build's Dockerfile: %v %q", err, body)
	}
	if body, err := ask(t, bf, api.BuildOpen{Build: "b1", Kind: api.BuildSecret, Secret: &b.Secrets[0]}); err != nil || body != "s3cret" {
		t.Fatalf("the build's secret: %v %q", err, body)
	}
	for name, req := range map[string]api.BuildOpen{
		"another directory":        {Build: "b1", Kind: api.BuildOpenFile, Dir: "/etc", Path: "passwd"},
		"a way out of the context": {Build: "b1", Kind: api.BuildOpenFile, Dir: ctxDir, Path: "../../../../etc/passwd"},
		"a secret the build lacks": {Build: "b1", Kind: api.BuildSecret, Secret: &spec.BuildSecret{ID: "x", File: "/etc/shadow"}},
		"another build's id":       {Build: "b2", Kind: api.BuildOpenFile, Dir: ctxDir, Path: "Dockerfile"},
		"an agent the build lacks": {Build: "b1", Kind: api.BuildAgent, SSH: &spec.BuildSSH{ID: "default"}},
		"a walk of another place":  {Build: "b1", Kind: api.BuildWalk, Dir: "/root"},
	} {
		if body, err := ask(t, bf, req); err == nil {
			t.Errorf("%s: served %q", name, body)
		}
	}
}
