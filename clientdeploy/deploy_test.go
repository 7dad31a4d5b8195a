package clientdeploy

import (
	"context"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/spec"
)

// recorder is a local engine that notes the calls Deploy makes and what
// stderr held when Up came.
type recorder struct {
	Engine
	err   *strings.Builder
	calls []string
	upErr string // stderr when Up was called
}

func (r *recorder) Warnings(spec.Project) []spec.Warning {
	r.calls = append(r.calls, "warnings")
	return []spec.Warning{{Service: "web", Field: "x", Message: "not honoured"}}
}

func (r *recorder) Up(context.Context, spec.Project, engine.UpOptions) (engine.UpResult, error) {
	r.calls = append(r.calls, "up")
	r.upErr = r.err.String()
	return engine.UpResult{}, nil
}

func localSession(environ ...string) (*Session, *recorder) {
	var errb strings.Builder
	r := &recorder{err: &errb}
	return &Session{streams: Streams{Out: &strings.Builder{}, Err: &errb, Environ: environ}, engine: r, progress: progress.Discard}, r
}

func project() spec.Project {
	return spec.Project{Name: "p", Services: map[string]spec.App{"web": {Name: "web", Image: "busybox"}}}
}

// Deploy's order is the one up and deploy had each: the refusals of what
// nothing would serve come before the engine is asked anything, and the
// warnings print before Up (issue 23 item 5: one workflow for both).
func TestDeployOrder(t *testing.T) {
	se, r := localSession()
	if _, err := se.Deploy(context.Background(), project(), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.calls, ","); got != "warnings,up" || !strings.Contains(r.upErr, "WARN ") {
		t.Errorf("calls %s, stderr at Up %q; want warnings printed, then up", got, r.upErr)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Hold: HoldNone, Egress: &EgressFlags{Mode: "proxy", Default: "client"}}, "--detach: services web may route egress to the client"},
		{Options{Egress: &EgressFlags{Routes: []string{"no-equals"}}}, `--egress-route "no-equals"`},
		{Options{LocalMounts: []string{t.TempDir() + ":/data"}}, "--local-mount needs --server"},
	} {
		se, r := localSession()
		if _, err := se.Deploy(context.Background(), project(), c.o); err == nil || !strings.Contains(err.Error(), c.want) || len(r.calls) > 0 {
			t.Errorf("%+v: err %v, calls %v; want %q before the engine is asked", c.o, err, r.calls, c.want)
		}
	}
}
