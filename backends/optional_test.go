package backends

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// toy implements Backend (the embedded nil panics if called), Pauser and
// RemoteModer.
type toy struct{ Backend }

func (toy) Name() string                          { return "toy" }
func (t toy) Capabilities() Capabilities          { return Capabilities{Features: FeaturesOf(t)} }
func (toy) Pause(context.Context, string) error   { return nil }
func (toy) Unpause(context.Context, string) error { return nil }
func (toy) RemoteMode() (bool, string)            { return true, "TOY_REMOTE" }

// drifted has a Stats and a Kill of other signatures than StatsSource's
// and Signaler's.
type drifted struct{ toy }

func (drifted) Stats(context.Context) (Stats, error)    { return Stats{}, nil }
func (drifted) Kill(context.Context, string, int) error { return nil }

// Features are stated once: FeaturesOf is what a type implements, less
// what it withholds, and Want hands out only those.
func TestFeaturesOf(t *testing.T) {
	if got, want := FeaturesOf(toy{}), []Feature{FeaturePause, FeatureRemoteMode}; !slices.Equal(got, want) {
		t.Errorf("features of toy: %v, want %v", got, want)
	}
	if got := FeaturesOf(toy{}, FeaturePause); !slices.Equal(got, []Feature{FeatureRemoteMode}) {
		t.Errorf("features of toy without pause: %v", got)
	}
	if _, err := Want[RemoteModer](toy{}, FeatureRemoteMode, "remote mode"); err != nil {
		t.Errorf("want remote mode: %v", err)
	}
	if _, err := Want[Workloads](toy{}, FeatureWorkloads, "workloads"); !errdefs.IsNotImplemented(err) || !strings.Contains(err.Error(), "workloads is not supported by the toy backend") {
		t.Errorf("want workloads of toy: %v", err)
	}
	seen := map[Feature]bool{}
	for _, f := range AllFeatures {
		if seen[f] {
			t.Errorf("feature %s listed twice", f)
		}
		seen[f] = true
	}
	if len(optional) != len(AllFeatures) {
		t.Errorf("%d features, %d interfaces", len(AllFeatures), len(optional))
	}
}

// A method whose signature drifted from its interface's would drop the
// feature silently; Unimplemented names it.
func TestUnimplemented(t *testing.T) {
	if u := Unimplemented(toy{}); len(u) != 0 {
		t.Errorf("toy: %v", u)
	}
	u := Unimplemented(drifted{})
	if len(u) != 2 || !strings.Contains(u[0], "Kill yet does not implement Signaler (feature kill)") ||
		!strings.Contains(u[1], "Stats yet does not implement StatsSource (feature stats)") {
		t.Errorf("drifted: %q", u)
	}
}
