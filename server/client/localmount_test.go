package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// --local-mount's forms (issue 12): [SERVICE=]SRC:DST[:ro], SRC relative
// to the spec's directory; anything else is refused.
func TestParseLocalMount(t *testing.T) {
	for in, want := range map[string]LocalMount{
		"./src:/app":       {Source: "/p/src", Target: "/app"},
		"web=src:/app:ro":  {Service: "web", Source: "/p/src", Target: "/app", ReadOnly: true},
		"/abs/x:/etc/x:rw": {Source: "/abs/x", Target: "/etc/x"},
		"a=b/../c:/d":      {Service: "a", Source: "/p/c", Target: "/d"},
		"/k=v/dir:/mnt:ro": {Source: "/k=v/dir", Target: "/mnt", ReadOnly: true},
	} {
		got, err := ParseLocalMount(in, "/p")
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "src", "src:rel", ":/x", "a:/b:rx", "a:/b:ro:x"} {
		if _, err := ParseLocalMount(bad, "/p"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// One export per source and mode, bound into every app without SERVICE=;
// a file exports its parent with only its name; sockets are refused.
func TestNewExports(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.conf")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := spec.Project{Name: "p", Services: map[string]spec.App{"a": {}, "b": {}}}.Normalize()
	e, err := NewExports(p, []LocalMount{{Source: dir, Target: "/d"}, {Service: "b", Source: dir, Target: "/e"}, {Service: "a", Source: file, Target: "/f", ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Specs) != 2 || e.Specs[1].File != "f.conf" || e.Specs[1].Root != dir || !e.Specs[1].ReadOnly {
		t.Errorf("exports %+v", e.Specs)
	}
	if len(e.Wire) != 4 || e.Wire[0].Index != 0 || e.Wire[2].Index != 0 || e.Wire[3].Index != 1 || e.Wire[3].File != "f.conf" {
		t.Errorf("wire %+v", e.Wire)
	}
	if _, err := NewExports(p, []LocalMount{{Service: "c", Source: dir, Target: "/d"}}); err == nil {
		t.Error("an unknown service was accepted")
	}
	if _, err := NewExports(p, []LocalMount{{Source: "/dev/null", Target: "/d"}}); err == nil || !strings.Contains(err.Error(), "only directories and regular files") {
		t.Errorf("a device: %v", err)
	}
}

// Compose binds of this machine's files become client-local mounts (a
// missing source is created, as Compose does); the project is copied,
// not changed; a device stays a server bind and says so.
func TestBindsToLocal(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "data")
	p := spec.Project{Name: "p", Services: map[string]spec.App{"web": {Mounts: []spec.Mount{
		{Source: dir, Target: "/src", ReadOnly: true},
		{Source: missing, Target: "/data", CreateHostPath: true},
		{Source: "/dev/null", Target: "/null"},
	}}}}.Normalize()
	out, mounts, notes, err := BindsToLocal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(mounts) != 2 || !mounts[0].ReadOnly || mounts[1].Source != missing || mounts[0].Service != "web" {
		t.Errorf("mounts %+v", mounts)
	}
	if st, err := os.Stat(missing); err != nil || !st.IsDir() {
		t.Errorf("missing source not created: %v", err)
	}
	if m := out.Services["web"].Mounts; len(m) != 1 || m[0].Source != "/dev/null" {
		t.Errorf("kept binds %+v", m)
	}
	if len(p.Services["web"].Mounts) != 3 {
		t.Error("the input project was changed")
	}
	if len(notes) != 3 || !strings.Contains(notes[0], "client-local mount (read-only") || !strings.Contains(notes[2], "stays a bind of the server's host path") {
		t.Errorf("notes %q", notes)
	}
}
