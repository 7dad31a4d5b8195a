package engine

import (
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestJoinAppDropsCapabilities: what the companion says the app must not
// hold is added to the app's capDrop, once, without touching the spec it
// came from.
func TestJoinAppDropsCapabilities(t *testing.T) {
	user := append(make([]string, 0, 4), "MKNOD", "NET_RAW") // room to append in place
	a := spec.App{Name: "web", CapDrop: user}
	got := joinApp(a, Attachment{AppCapDrop: []string{"NET_ADMIN", "NET_RAW"}})
	if want := []string{"MKNOD", "NET_RAW", "NET_ADMIN"}; !slices.Equal(got.CapDrop, want) {
		t.Errorf("capDrop %v, want %v", got.CapDrop, want)
	}
	if !slices.Equal(user[:cap(user)][:3], []string{"MKNOD", "NET_RAW", ""}) {
		t.Errorf("the user's capDrop changed: %v", user[:cap(user)])
	}
	if got := joinApp(spec.App{Name: "web"}, Attachment{}); got.CapDrop != nil {
		t.Errorf("no companion drop: capDrop %v", got.CapDrop)
	}
}
