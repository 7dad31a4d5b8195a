package halfmade

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/cni"
	"github.com/cornus-dev/cornus/backends/internal/localstore"
)

// fakeNet records detaches; it holds attachments of the IDs in atts.
type fakeNet struct {
	atts     []string
	detached []string
}

func (f *fakeNet) ListContainers(context.Context) ([]cni.Container, error) {
	var out []cni.Container
	for _, id := range f.atts {
		out = append(out, cni.Container{ID: id})
	}
	return out, nil
}

func (f *fakeNet) Detach(_ context.Context, o cni.DetachOptions) (cni.DetachResult, error) {
	f.detached = append(f.detached, o.ContainerID)
	return cni.DetachResult{}, nil
}

func (f *fakeNet) RemoveNetns(context.Context, string) error { return nil }

// fakeVolumes holds anonymous volumes by the container they were made for.
type fakeVolumes struct{ removed []string }

func (f *fakeVolumes) ListVolumes(_ context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	return []backends.Volume{{Name: "anon-of-" + o.Labels[localstore.LabelAnonymousFor]}}, nil
}

func (f *fakeVolumes) RemoveVolume(_ context.Context, name string, _ bool) error {
	f.removed = append(f.removed, name)
	return nil
}

// Locks down the sweep: a half-made container no Create holds goes
// (backend parts, networks, anonymous volumes, directory); a whole one,
// and one whose Create still holds its lock, stay; a stale lock goes;
// attachments of containers that are gone are detached.
func TestSweep(t *testing.T) {
	dir := t.TempDir()
	net := &fakeNet{atts: []string{"whole", "gone"}}
	vols := &fakeVolumes{}
	s := Store{Dir: dir, Record: "container.json", Net: net, Volumes: vols}
	for _, id := range []string{"whole", "half", "busy"} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "whole", "container.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := s.Lock("busy")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.WriteFile(s.lockPath("vanished"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var removed []string
	err = s.Sweep(context.Background(), func(_ context.Context, id string) error {
		removed = append(removed, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"half"}) {
		t.Errorf("removed %v, want [half]", removed)
	}
	for id, want := range map[string]bool{"whole": true, "busy": true, "half": false} {
		if _, err := os.Stat(filepath.Join(dir, id)); (err == nil) != want {
			t.Errorf("%s present: %v, want %v", id, err == nil, want)
		}
	}
	if _, err := os.Stat(s.lockPath("vanished")); !os.IsNotExist(err) {
		t.Errorf("stale lock kept: %v", err)
	}
	if _, err := os.Stat(s.lockPath("busy")); err != nil {
		t.Errorf("a held lock was removed: %v", err)
	}
	slices.Sort(net.detached)
	if !slices.Equal(net.detached, []string{"gone", "half"}) {
		t.Errorf("detached %v, want [gone half]", net.detached)
	}
	if !slices.Equal(vols.removed, []string{"anon-of-half"}) {
		t.Errorf("volumes removed %v", vols.removed)
	}
}
