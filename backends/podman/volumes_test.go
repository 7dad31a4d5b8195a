package podman

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// TestListVolumesWhileRemoving: podman 4.3 fails a whole volume list
// with "no such volume" when one it listed is removed before it read it
// (a down beside a list, seen in CI's rootless lane). Lists beside
// creates and removals of volumes with the same labels must never fail.
func TestListVolumesWhileRemoving(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	project := "listrace" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	sel := backends.ListOptions{Labels: map[string]string{backends.ComposeProject: project}}
	t.Cleanup(func() { // one made and not yet removed when a list failed
		vs, err := b.ListVolumes(context.Background(), sel)
		for _, v := range vs {
			err = errors.Join(err, b.RemoveVolume(context.Background(), v.Name, true))
		}
		if err != nil {
			t.Errorf("clean up: %v", err)
		}
	})
	done := make(chan error, 1)
	go func() {
		for i := range 60 {
			v, err := b.EnsureVolume(ctx, backends.VolumeSpec{Project: project, Key: "v" + strconv.Itoa(i)})
			if err == nil {
				err = b.RemoveVolume(ctx, v.Name, true)
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	lists := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d lists beside 60 creates and removals", lists)
			return
		default:
		}
		if _, err := b.ListVolumes(ctx, sel); err != nil {
			cancel()
			t.Fatalf("a list beside removals failed: %v (the removals, stopped: %v)", err, <-done)
		}
		lists++
	}
}
