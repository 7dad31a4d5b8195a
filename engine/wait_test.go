package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// logsOnly is a backend fake that has logs and nothing else.
type logsOnly struct{ backends.Backend }

func (logsOnly) Capabilities() backends.Capabilities { return backends.Capabilities{} }
func (logsOnly) Logs(_ context.Context, _ string, o backends.LogOptions) error {
	_, err := fmt.Fprintln(o.Stderr, "cannot open database")
	return err
}

// A dependency that exited is crash-looping when its restart policy
// restarts it, whatever the runtime shows between the runs (podman shows
// "exited" for a moment: CI20), and simply exited otherwise.
func TestDependencyExits(t *testing.T) {
	e := New(logsOnly{})
	for _, c := range []struct {
		restart string
		code    int
		want    string
	}{
		{"always", 1, "is crash-looping"},
		{"unless-stopped", 0, "is crash-looping"},
		{"on-failure:3", 1, "is crash-looping"},
		{"on-failure", 0, "exited (exit code 0) before becoming healthy"},
		{"no", 1, "exited (exit code 1) before becoming healthy"},
		{"", 1, "exited (exit code 1) before becoming healthy"},
	} {
		cs := []backends.Container{{ID: "x", Name: "db-1", State: backends.StateExited, ExitCode: c.code}}
		_, err := e.allHealthy(context.Background(), "db", c.restart, cs)
		if err == nil || !strings.Contains(err.Error(), "dependency db "+c.want) || !strings.Contains(err.Error(), "cannot open database") {
			t.Errorf("restart %q, exit %d: %v, want %q", c.restart, c.code, err, c.want)
		}
	}
}
