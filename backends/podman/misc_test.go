package podman

import (
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Locks down image names: Docker's familiar form out, Docker Hub in for
// pulls, no TLS checks only for registries on this host.
func TestImageNames(t *testing.T) {
	for in, want := range map[string]string{
		"localhost/cornus-test/busybox:2": "cornus-test/busybox:2", "docker.io/library/busybox:1": "busybox:1",
		"docker.io/org/app:2": "org/app:2", "quay.io/x/y:1": "quay.io/x/y:1",
	} {
		if got := familiar(in); got != want {
			t.Fatalf("familiar(%q) = %q", in, got)
		}
	}
	for in, want := range map[string]string{
		"busybox": "docker.io/library/busybox", "org/app:1": "docker.io/org/app:1", "localhost:5000/app": "localhost:5000/app",
		"quay.io/x/y": "quay.io/x/y", "localhost/app": "localhost/app",
	} {
		if got := qualified(in); got != want {
			t.Fatalf("qualified(%q) = %q", in, got)
		}
	}
	for ref, want := range map[string]bool{
		"localhost:5000/a": true, "127.0.0.1:5000/a": true, "[::1]:5000/a": true, "quay.io/a": false, "10.0.0.1:5000/a": false,
	} {
		if got := loopbackRegistry(ref); got != want {
			t.Fatalf("loopbackRegistry(%q) = %v", ref, got)
		}
	}
}

// Locks down ps output split into columns when podman answers whole lines.
func TestSplitColumns(t *testing.T) {
	p := splitColumns(backends.Processes{Titles: []string{"PID   USER     COMMAND"}, Processes: [][]string{{"1 root     sleep 100"}, {"7 root  sh -c echo  a"}}})
	if !slices.Equal(p.Titles, []string{"PID", "USER", "COMMAND"}) || !slices.Equal(p.Processes[0], []string{"1", "root", "sleep 100"}) ||
		!slices.Equal(p.Processes[1], []string{"7", "root", "sh -c echo  a"}) {
		t.Fatalf("%+v", p)
	}
	table := backends.Processes{Titles: []string{"PID", "COMMAND"}, Processes: [][]string{{"1", "sleep"}}}
	if got := splitColumns(table); !slices.Equal(got.Titles, table.Titles) {
		t.Fatalf("a table is kept: %+v", got)
	}
}

// Locks down subnets: an IP range becomes a lease range without the
// network and broadcast addresses.
func TestSubnetOf(t *testing.T) {
	s, err := subnetOf(spec.Subnet{Subnet: "10.5.0.0/24", Gateway: "10.5.0.1", IPRange: "10.5.0.0/25"})
	if err != nil || s.Subnet != "10.5.0.0/24" || s.Gateway != "10.5.0.1" || s.LeaseRange.StartIP != "10.5.0.1" || s.LeaseRange.EndIP != "10.5.0.127" {
		t.Fatalf("%+v %v", s, err)
	}
	s, _ = subnetOf(spec.Subnet{Subnet: "10.5.0.0/24", IPRange: "10.5.0.128/25"})
	if s.LeaseRange.StartIP != "10.5.0.128" || s.LeaseRange.EndIP != "10.5.0.254" {
		t.Fatalf("%+v", s.LeaseRange)
	}
	for _, bad := range []spec.Subnet{{Subnet: "x"}, {Subnet: "10.5.0.0/24", Gateway: "10.6.0.1"}, {Subnet: "10.5.0.0/24", IPRange: "10.6.0.0/25"}} {
		if _, err := subnetOf(bad); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
}
