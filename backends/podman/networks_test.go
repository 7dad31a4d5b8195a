package podman

import (
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

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
