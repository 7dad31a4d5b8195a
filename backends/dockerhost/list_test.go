package dockerhost

import (
	"net/netip"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/events"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/statustext"
)

// Locks down List's mapping of API 1.41 summaries: name without "/",
// health, exit code and times read from the status text, ports.
func TestSummary(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		status  string
		state   container.ContainerState
		health  backends.Health
		exit    int
		started time.Duration // ago, 0: zero time
		stopped time.Duration
	}{
		{"Up 3 seconds (healthy)", container.StateRunning, backends.HealthHealthy, 0, 3 * time.Second, 0},
		{"Up 3 seconds (health: starting)", container.StateRunning, backends.HealthStarting, 0, 3 * time.Second, 0},
		{"Up About a minute (unhealthy)", container.StateRunning, backends.HealthUnhealthy, 0, time.Minute, 0},
		{"Exited (137) 2 minutes ago", container.StateExited, "", 137, 0, 2 * time.Minute},
		{"Created", container.StateCreated, "", 0, 0, 0},
	} {
		c := summary(container.Summary{
			Names: []string{"/other/link", "/shop-web-1"}, Status: tc.status, State: tc.state,
			Ports: []container.PortSummary{{IP: netip.MustParseAddr("0.0.0.0"), PrivatePort: 80, PublicPort: 8080, Type: "tcp"}},
		}, now)
		if c.Name != "shop-web-1" || c.Health != tc.health || c.ExitCode != tc.exit || len(c.Ports) != 1 || c.Ports[0] != (backends.PortBinding{HostIP: "0.0.0.0", HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}) {
			t.Errorf("%q: %+v", tc.status, c)
		}
		if (tc.started != 0 && !c.StartedAt.Equal(now.Add(-tc.started))) || (tc.stopped != 0 && !c.FinishedAt.Equal(now.Add(-tc.stopped))) {
			t.Errorf("%q: started %v finished %v", tc.status, c.StartedAt, c.FinishedAt)
		}
		if got := statustext.Docker(c, now); got != tc.status {
			t.Errorf("%q renders back as %q", tc.status, got)
		}
	}
}

// Locks down event mapping: labels without Docker's own attributes, exit
// code on die; with Networks, connect/disconnect name the container, other
// network events are dropped and labels are filtered here.
func TestEventMapping(t *testing.T) {
	die := events.Message{Type: events.ContainerEventType, Action: "die", TimeNano: 1_700_000_000_000_000_001, Actor: events.Actor{ID: "abc", Attributes: map[string]string{
		"name": "shop-web-1", "image": "img", "exitCode": "3", backends.LabelProject: "shop",
	}}}
	e, ok := event(die, backends.EventOptions{})
	if !ok || e.ExitCode == nil || *e.ExitCode != 3 || e.Name != "shop-web-1" || e.Image != "img" || len(e.Labels) != 1 || e.Time.UnixNano() != 1_700_000_000_000_000_001 {
		t.Fatalf("event: %v %+v", ok, e)
	}
	nets := backends.EventOptions{Networks: true, Labels: map[string]string{backends.LabelProject: "shop"}}
	if _, ok := event(die, nets); !ok {
		t.Fatal("matching container event dropped")
	}
	other := backends.EventOptions{Networks: true, Labels: map[string]string{backends.LabelProject: "other"}}
	if _, ok := event(die, other); ok {
		t.Fatal("container event of another project kept")
	}
	connect := events.Message{Type: events.NetworkEventType, Action: events.ActionConnect, Time: 1_700_000_000, Actor: events.Actor{ID: "net1", Attributes: map[string]string{"container": "abc", "name": "shop_default"}}}
	if e, ok := event(connect, other); !ok || e.ID != "abc" || e.Action != "connect" || e.Time.Unix() != 1_700_000_000 {
		t.Fatalf("connect: %v %+v", ok, e)
	}
	connect.Action = events.ActionCreate
	if _, ok := event(connect, other); ok {
		t.Fatal("network create kept")
	}
}
