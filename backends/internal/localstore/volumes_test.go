package localstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// A volume is found again by name, filtered by its compose labels, refused
// removal while a container uses it (Conflict) unless forced, and a driver
// other than local names the backend (NotImplemented).
func TestVolumes(t *testing.T) {
	ctx := context.Background()
	user := "web-1"
	vs := NewVolumes(t.TempDir(), "test", func(context.Context, string) (string, error) { return user, nil })
	v, err := vs.Ensure(ctx, backends.VolumeSpec{Project: "p", Key: "data"})
	if err != nil || v.Name != "p_data" || v.Labels[backends.ComposeVolume] != "data" {
		t.Fatalf("ensure: %+v %v", v, err)
	}
	if again, err := vs.Ensure(ctx, backends.VolumeSpec{Project: "p", Key: "data"}); err != nil || again.Created != v.Created {
		t.Fatalf("ensure again: %+v %v", again, err)
	}
	if _, err := vs.Ensure(ctx, backends.VolumeSpec{Volume: spec.Volume{Name: "gone", External: true}}); !errdefs.IsNotFound(err) {
		t.Fatalf("external: %v", err)
	}
	_, err = vs.Ensure(ctx, backends.VolumeSpec{Volume: spec.Volume{Name: "x", Driver: "nfs"}})
	if !errors.Is(err, errdefs.ErrNotImplemented) || !strings.Contains(err.Error(), "by the test backend") {
		t.Fatalf("driver: %v", err)
	}
	anon, err := vs.Anonymous("c1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := vs.List(ctx, backends.ListOptions{Labels: map[string]string{LabelAnonymousFor: "c1"}}); len(l) != 1 || l[0].Name != anon.Name {
		t.Fatalf("list anonymous: %+v", l)
	}
	if l, _ := vs.List(ctx, backends.ListOptions{}); len(l) != 2 {
		t.Fatalf("list: %+v", l)
	}
	if err := vs.Remove(ctx, "p_data", false); !errdefs.IsConflict(err) || !strings.Contains(err.Error(), user) {
		t.Fatalf("remove in use: %v", err)
	}
	if err := vs.Remove(ctx, "p_data", true); err != nil {
		t.Fatal(err)
	}
	if err := vs.Remove(ctx, "p_data", true); !errdefs.IsNotFound(err) {
		t.Fatalf("remove again: %v", err)
	}
	if err := ValidName("a/b"); !errdefs.IsInvalidArgument(err) {
		t.Fatalf("valid name: %v", err)
	}
}
