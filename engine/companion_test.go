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

// A wrapper the companion asks for replaces the app's entrypoint and
// command; without one they stay the user's (nil: the image's).
func TestJoinAppWrapper(t *testing.T) {
	a := spec.App{Name: "web", Command: []string{"serve"}}
	got := joinApp(a, Attachment{AppEntrypoint: []string{"/bin/sh", "-c", "exec \"$@\"", "w"}, AppCommand: []string{"app", "serve"}})
	if !slices.Equal(got.Entrypoint, []string{"/bin/sh", "-c", "exec \"$@\"", "w"}) || !slices.Equal(got.Command, []string{"app", "serve"}) {
		t.Errorf("wrapped: entrypoint %q, command %q", got.Entrypoint, got.Command)
	}
	if got := joinApp(a, Attachment{}); got.Entrypoint != nil || !slices.Equal(got.Command, a.Command) {
		t.Errorf("no wrapper: entrypoint %q, command %q", got.Entrypoint, got.Command)
	}
}

// A companion beside its app joins the app's networks under none of its
// names or addresses; the app keeps its own.
func TestBesideApp(t *testing.T) {
	a := spec.App{Name: "web", Networks: []spec.NetworkAttachment{{Name: "front", Aliases: []string{"www"}, IPv4: "10.0.0.5"}, {Name: "back"}},
		Hostname: "web", Ports: []spec.Port{{Container: 80}}}
	comp := besideApp(spec.App{Name: "web-caretaker"}, a)
	if want := []spec.NetworkAttachment{{Name: "front"}, {Name: "back"}}; !slices.EqualFunc(comp.Networks, want, func(x, y spec.NetworkAttachment) bool {
		return x.Name == y.Name && x.IPv4 == y.IPv4 && len(x.Aliases) == 0
	}) || comp.Hostname != "" || len(comp.Ports) != 0 {
		t.Errorf("the companion: %+v", comp)
	}
	if len(a.Networks) != 2 || a.Networks[0].IPv4 != "10.0.0.5" || len(a.Ports) != 1 {
		t.Errorf("the app changed: %+v", a)
	}
}
