package engine

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// imageStore is a fake for the pure pull decision: images by ref with
// their last-tagged time; pulls are recorded (and fail if offline).
type imageStore struct {
	backends.Backend
	tagged  map[string]time.Time
	pulled  []string
	offline bool
	noPull  bool // the runtime cannot pull (declares no FeaturePull)
	onStart bool // the runtime pulls missing images at start (FeatureStartPull)
	looked  []string
}

func (s *imageStore) Capabilities() backends.Capabilities {
	fs := []backends.Feature{backends.FeatureImages}
	if !s.noPull {
		fs = append(fs, backends.FeaturePull)
	}
	if s.onStart {
		fs = append(fs, backends.FeatureStartPull)
	}
	return backends.Capabilities{Features: fs}
}
func (s *imageStore) PullsOnStart()                                          {}
func (s *imageStore) LoadImage(context.Context, io.Reader) ([]string, error) { return nil, nil }
func (s *imageStore) ListImages(context.Context) ([]backends.Image, error)   { return nil, nil }
func (s *imageStore) RemoveImage(context.Context, string, bool) error        { return nil }
func (s *imageStore) Name() string                                           { return "fake" }
func (s *imageStore) InspectImage(_ context.Context, ref string) (backends.Image, error) {
	s.looked = append(s.looked, ref)
	at, ok := s.tagged[ref]
	if !ok {
		return backends.Image{}, errdefs.ErrNotFound
	}
	return backends.Image{ID: ref, LastTagged: at}, nil
}
func (s *imageStore) PullImage(_ context.Context, ref string, _ func(backends.PullProgress)) error {
	s.pulled = append(s.pulled, ref)
	if s.offline {
		return errors.New("registry unreachable")
	}
	return nil
}

// TestPullPolicies: refresh policies pull only when the local image is
// older than their interval; a failed refresh keeps the local image.
func TestPullPolicies(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		policy  string
		tagged  time.Duration // ago; < 0: absent
		offline bool
		pull    bool
		fails   bool
	}{
		{"", time.Hour, false, false, false},
		{"", -1, false, true, false},
		{"never", -1, false, false, true},
		{"always", time.Minute, false, true, false},
		{"daily", 2 * time.Hour, false, false, false},
		{"daily", 25 * time.Hour, false, true, false},
		{"weekly", 25 * time.Hour, false, false, false},
		{"every_12h", 13 * time.Hour, false, true, false},
		{"every_12h", 13 * time.Hour, true, true, false}, // offline: warned, local image used
		{"every_12h", -1, true, true, true},
		{"refresh", time.Second, false, true, false},
	} {
		s := &imageStore{tagged: map[string]time.Time{}, offline: c.offline}
		if c.tagged >= 0 {
			s.tagged["img"] = now.Add(-c.tagged)
		}
		err := New(s).ensureImages(context.Background(), []spec.App{{Name: "a", Image: "img", PullPolicy: c.policy}})
		if (err != nil) != c.fails || (len(s.pulled) > 0) != c.pull {
			t.Errorf("%q tagged %v ago offline %v: pulled %v err %v; want pull %v fails %v", c.policy, c.tagged, c.offline, s.pulled, err, c.pull, c.fails)
		}
	}
}

// A runtime that pulls missing images when it starts (Kubernetes) is left
// the default policy's images: not looked for, not pulled first; the
// other policies still are.
func TestStartPullLeavesMissing(t *testing.T) {
	s := &imageStore{tagged: map[string]time.Time{}, onStart: true}
	apps := []spec.App{{Name: "a", Image: "absent"}, {Name: "b", Image: "other", PullPolicy: "missing"}}
	if err := New(s).ensureImages(context.Background(), apps); err != nil || len(s.looked)+len(s.pulled) != 0 {
		t.Fatalf("default policy: %v, looked for %v, pulled %v; want neither", err, s.looked, s.pulled)
	}
	err := New(s).ensureImages(context.Background(), []spec.App{{Name: "a", Image: "absent", PullPolicy: "never"}, {Name: "c", Image: "fresh", PullPolicy: "always"}})
	if err == nil || len(s.pulled) != 1 || s.pulled[0] != "fresh" {
		t.Fatalf("never and always: %v, pulled %v; want never's error and always's pull", err, s.pulled)
	}
}

// TestNoPull: a backend that cannot pull uses what it has, says so for
// policies that ask for pulls, and fails clearly for a missing image.
func TestNoPull(t *testing.T) {
	s := &imageStore{tagged: map[string]time.Time{"img": time.Now().Add(-48 * time.Hour)}, noPull: true}
	e := New(s)
	if err := e.ensureImages(context.Background(), []spec.App{{Name: "a", Image: "img", PullPolicy: "daily"}}); err != nil || len(s.pulled) != 0 {
		t.Fatalf("present image due a refresh: %v, pulled %v", err, s.pulled)
	}
	ws := e.Warnings(spec.Project{Name: "p", Services: map[string]spec.App{"a": {Name: "a", Image: "img", PullPolicy: "daily"}}})
	if len(ws) != 1 || ws[0].Field != "pullPolicy" || !strings.Contains(ws[0].Message, "cannot pull") {
		t.Fatalf("warnings: %v", ws)
	}
	err := e.ensureImages(context.Background(), []spec.App{{Name: "a", Image: "missing"}})
	if !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "cornus image load") {
		t.Fatalf("missing image: %v", err)
	}
}

// An image the server's registry holds (PullAuth set) is the runtime's to
// pull with its credential: the engine neither looks for it nor pulls it,
// even under pull_policy never.
func TestPullAuthSkipsEnsure(t *testing.T) {
	s := &imageStore{tagged: map[string]time.Time{}}
	a := spec.App{Name: "a", Image: "reg:5000/app@sha256:00", PullPolicy: "never", PullAuth: &spec.RegistryAuth{Server: "reg:5000"}}
	if err := New(s).ensureImages(context.Background(), []spec.App{a}); err != nil || len(s.pulled) != 0 {
		t.Fatalf("ensure of a registry image: %v, pulled %v", err, s.pulled)
	}
}

// A built image the server's registry holds is named by its digest, which
// a rebuild changes: the engine does not look for it in a store the
// nodes, not the backend, pull into.
func TestPullAuthBuiltImage(t *testing.T) {
	s := &imageStore{tagged: map[string]time.Time{}}
	a := spec.App{Name: "a", Image: "reg:5000/app@sha256:00", Build: &spec.Build{Context: "."}, PullAuth: &spec.RegistryAuth{Server: "reg:5000"}}
	if id, err := New(s).builtImage(context.Background(), a); err != nil || id != "" {
		t.Fatalf("built image in the registry: %q %v", id, err)
	}
	a.PullAuth = nil
	if _, err := New(s).builtImage(context.Background(), a); err == nil {
		t.Fatal("a built image the store lacks was not reported")
	}
}
