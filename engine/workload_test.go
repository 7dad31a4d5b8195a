package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// unfit is a backend with workloads that fit no app.
type unfit struct {
	backends.Backend
	caps     backends.Capabilities
	withhold []backends.Feature
}

func (u unfit) Name() string { return "fake" }
func (u unfit) Capabilities() backends.Capabilities {
	c := u.caps
	c.Features = backends.FeaturesOf(u, u.withhold...)
	return c
}
func (unfit) FitsWorkload(backends.WorkloadSpec) string {
	return "ports: each replica needs a host port of its own"
}
func (unfit) ApplyWorkload(context.Context, backends.WorkloadSpec) (backends.WorkloadResult, error) {
	panic("not a workload")
}
func (unfit) RemoveWorkload(context.Context, string, string, *time.Duration) error { return nil }

type recorder struct {
	mu     sync.Mutex
	events []progress.Event
}

func (r *recorder) Event(e progress.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}
func (r *recorder) Close() {}

// Nothing is dropped silently: an app whose update settings a backend with
// workloads cannot use (it runs replica by replica) is warned about by
// name, unless the backend declares update a gap (warned before up). A
// backend that withholds workloads never gets asked (the engine asks the
// feature, not the type).
func TestUpdateUnusedWarns(t *testing.T) {
	p := spec.Project{Name: "p", Services: map[string]spec.App{"web": {Name: "web", Image: "img",
		Update: &spec.UpdateConfig{Parallelism: 2}}}}.Normalize()
	for _, c := range []struct {
		name     string
		caps     backends.Capabilities
		withhold []backends.Feature
		warn     bool
	}{
		{"workloads", backends.Capabilities{}, nil, true},
		{"update a gap", backends.Capabilities{Gaps: map[string]string{"update": "no"}}, nil, false},
		{"workloads withheld", backends.Capabilities{}, []backends.Feature{backends.FeatureWorkloads}, false},
	} {
		rec := &recorder{}
		e := New(unfit{caps: c.caps, withhold: c.withhold})
		_, _, ok, err := e.asWorkload(progress.WithWriter(context.Background(), rec), p, p.Services["web"], "h", nil, nil, false)
		if err != nil || ok {
			t.Fatalf("%s: asWorkload = %v, %v", c.name, ok, err)
		}
		warned := false
		for _, ev := range rec.events {
			if ev.Status == "Warning" && ev.ID == "web" && strings.HasPrefix(ev.Text, "update: ") && strings.Contains(ev.Text, "host port") {
				warned = true
			}
		}
		if warned != c.warn {
			t.Errorf("%s: warned %v, want %v: %+v", c.name, warned, c.warn, rec.events)
		}
	}
}
