package records

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/monitor"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	root := t.TempDir()
	s := &Store{
		Dir: func(id string) string { return filepath.Join(root, "containers", id) },
		IDs: func(context.Context) ([]string, error) {
			entries, err := os.ReadDir(filepath.Join(root, "containers"))
			var ids []string
			for _, e := range entries {
				ids = append(ids, e.Name())
			}
			return ids, err
		},
		Records:     monitor.NewStore(filepath.Join(root, "records")),
		TaskRunning: func(string) bool { return false },
	}
	for _, c := range []Container{
		{ID: "abc111def456abc111", Name: "web", Layers: []string{"l1"}, Spec: backends.ContainerSpec{Labels: map[string]string{"a": "1"}}},
		{ID: "abc222def456abc222", Name: "db"},
	} {
		if err := os.MkdirAll(s.Dir(c.ID), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestStoreFind(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	if c, err := s.Find(ctx, "/web"); err != nil || c.ID != "abc111def456abc111" || len(c.Layers) != 1 {
		t.Fatalf("by name: %+v %v", c, err)
	}
	if c, err := s.Find(ctx, "abc2"); err != nil || c.Name != "db" {
		t.Fatalf("by prefix: %+v %v", c, err)
	}
	if _, err := s.Find(ctx, "abc"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	if _, err := s.Find(ctx, "nope"); !errdefs.IsNotFound(err) {
		t.Fatalf("unknown: %v", err)
	}
	if id, err := s.ByName(ctx, "db"); err != nil || id != "abc222def456abc222" {
		t.Fatalf("ByName: %q %v", id, err)
	}
	if s.ResolveID(ctx, "nope") != "" || !s.Exists("abc111def456abc111") || s.Exists("nope") {
		t.Fatal("ResolveID/Exists")
	}
}

func TestStoreList(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	if l, err := s.List(ctx, backends.ListOptions{}); err != nil || len(l) != 0 {
		t.Fatalf("running only: %v %v", l, err)
	}
	l, err := s.List(ctx, backends.ListOptions{All: true})
	if err != nil || len(l) != 2 || l[0].Name != "db" || l[1].Name != "web" || l[0].State != backends.StateCreated {
		t.Fatalf("all: %+v %v", l, err)
	}
	l, err = s.List(ctx, backends.ListOptions{All: true, Labels: map[string]string{"a": "1"}})
	if err != nil || len(l) != 1 || l[0].ID != "abc111def456abc111" {
		t.Fatalf("labels: %+v %v", l, err)
	}
	d, err := s.Inspect(ctx, "web")
	if err != nil || d.Config.Hostname != "abc111def456" {
		t.Fatalf("inspect: %+v %v", d, err)
	}
}
