package server

import (
	"context"
	"strings"
	"testing"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/spec"
)

// fakeBackend is a backend with no optional feature (anything but its
// name and capabilities panics).
type fakeBackend struct{ backends.Backend }

func (fakeBackend) Name() string                        { return "fake" }
func (fakeBackend) Capabilities() backends.Capabilities { return backends.Capabilities{} }

// remoteBackend has a remote mode, on or off.
type remoteBackend struct {
	fakeBackend
	on bool
}

func (r remoteBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{Features: backends.FeaturesOf(r)}
}
func (r remoteBackend) RemoteMode() (bool, string) { return r.on, "FAKE_REMOTE" }

// mountsOnlyBackend's remote mode moves only mounts (bare's).
type mountsOnlyBackend struct{ remoteBackend }

func (m mountsOnlyBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{Features: backends.FeaturesOf(m)}
}
func (mountsOnlyBackend) RemoteMountsOnly() bool { return true }

// hostBackend shares this host's mounts.
type hostBackend struct{ fakeBackend }

func (h hostBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{Features: backends.FeaturesOf(h)}
}
func (hostBackend) CheckLocalMounts(context.Context) error { return nil }

// serverOf is a server of b, as far as remote mode and client-local mounts
// go.
func serverOf(b backends.Backend) *Server {
	s := &Server{b: b}
	s.setRemote(b)
	return s
}

// Issue 12: remote mode is the backend's to say (each backend reads its own
// variable: backends/*'s tests), never looked up by its name; a client
// cannot set the label that tells companions what to mount.
func TestRemoteModeSelection(t *testing.T) {
	for _, c := range []struct {
		b        backends.Backend
		on       bool
		variable string
	}{
		{fakeBackend{}, false, ""},
		{remoteBackend{}, false, "FAKE_REMOTE"},
		{remoteBackend{on: true}, true, "FAKE_REMOTE"},
		{hostBackend{}, false, ""},
	} {
		if on, v := remoteMode(c.b); on != c.on || v != c.variable {
			t.Errorf("%T %+v: %v %q, want %v %q", c.b, c.b, on, v, c.on, c.variable)
		}
	}
	p := spec.Project{Name: "p", Services: map[string]spec.App{"app": {Name: "app", Labels: map[string]string{caretaker.LabelLocalMounts: "[]"}}}}
	if err := refuseReservedLabels(p); !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), "services.app.labels."+caretaker.LabelLocalMounts) {
		t.Errorf("a client's mounts label: %v", err)
	}
}

// The refusals of client-local mounts and of exec --forward-agent name the
// chosen backend's remote-mode variable, or say it has none; a backend
// that shares this host's mounts takes them.
func TestRemoteModeRefusals(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		b      backends.Backend
		mounts string // "" when taken
		agent  string
	}{
		{fakeBackend{}, "client-local mounts are not supported by the fake backend: its runtime does not share this server's mounts, and it has no remote mode",
			"the fake backend has no remote mode"},
		{remoteBackend{}, "client-local mounts are not supported by the fake backend outside its remote mode (FAKE_REMOTE=1 on the server",
			"exec --forward-agent needs a remote-mode deployment (FAKE_REMOTE=1 on the server)"},
		{remoteBackend{on: true}, "remote mode (FAKE_REMOTE=1) needs the URL companions dial back to", ""},
		// Bare's remote mode: companions for mounts and credentials only,
		// which serve no agent, on or off.
		{mountsOnlyBackend{remoteBackend{on: true}}, "remote mode (FAKE_REMOTE=1) needs the URL companions dial back to", "companions to client-local mounts and credentials only"},
		{mountsOnlyBackend{}, "outside its remote mode (FAKE_REMOTE=1", "companions to client-local mounts and credentials only"},
		{hostBackend{}, "", "the fake backend has no remote mode"},
	} {
		s := serverOf(c.b)
		err := s.checkLocalMounts(ctx)
		switch {
		case c.mounts == "" && (errdefs.IsNotImplemented(err) || errdefs.IsFailedPrecondition(err)):
			t.Errorf("%T %+v: client-local mounts refused: %v", c.b, c.b, err)
		case c.mounts != "" && (err == nil || !strings.Contains(err.Error(), c.mounts)):
			t.Errorf("%T %+v: client-local mounts: %v, want %q", c.b, c.b, err, c.mounts)
		}
		if c.agent == "" {
			continue
		}
		if _, _, err := s.forwardAgent(execReplica{}, "alice", ""); !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), c.agent) {
			t.Errorf("%T %+v: exec --forward-agent: %v, want %q", c.b, c.b, err, c.agent)
		}
	}
}
