package cni

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// Locks down rollback: an Attach whose second network fails leaves no
// record, lease or cache entry behind, and bad input is refused early.
func TestRealAttachFailureRollsBack(t *testing.T) {
	m := realManager(t)
	sfx := suffix(t)
	netName, id := "tr"+sfx, "r-"+sfx
	e := env{t, m}
	n := e.network(NetworkOptions{Name: netName})
	ns, err := m.CreateNetns(bg(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.RemoveNetns(bg(), id) })

	cases := []struct {
		name string
		eps  []Endpoint
		want func(error) bool
	}{
		{"unknown network", []Endpoint{{Network: netName}, {Network: "nosuch" + sfx}}, errdefs.IsNotFound},
		{"address outside the subnet", []Endpoint{{Network: netName, IPv4: netip.MustParseAddr("192.0.2.77")}}, errdefs.IsInvalidArgument},
		{"gateway address", []Endpoint{{Network: netName, IPv4: n.Gateway}}, errdefs.IsInvalidArgument},
		{"bad alias", []Endpoint{{Network: netName, Aliases: []string{"a b"}}}, errdefs.IsInvalidArgument},
	}
	for _, c := range cases {
		if _, err := m.Attach(bg(), AttachOptions{ContainerID: id, Netns: ns, Networks: c.eps}); !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A namespace path that is not one: the bridge plugin's ADD fails
	// after host-local may have leased; everything is undone.
	bogus := filepath.Join(t.TempDir(), "not-a-netns")
	if err := os.WriteFile(bogus, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Attach(bg(), AttachOptions{ContainerID: id, Netns: bogus, Networks: []Endpoint{{Network: netName}}}); err == nil {
		t.Fatal("Attach into a plain file succeeded")
	} else if !strings.Contains(err.Error(), "attach "+id+" to "+netName) {
		t.Errorf("error %q does not say what was attached where", err)
	}
	if cs, _ := m.ListContainers(bg()); len(cs) > 0 {
		t.Errorf("failed attaches left records: %+v", cs)
	}
	if leases := leases(t, m, netName); len(leases) > 0 {
		t.Errorf("failed attaches left leases: %v", leases)
	}
	// And the real thing still works afterwards, with a second call adding
	// nothing twice.
	if _, err := m.Attach(bg(), AttachOptions{ContainerID: id, Netns: ns, Networks: []Endpoint{{Network: netName}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = m.Detach(bg(), DetachOptions{ContainerID: id}) })
	if _, err := m.Attach(bg(), AttachOptions{ContainerID: id, Netns: ns, Networks: []Endpoint{{Network: netName}}}); !errdefs.IsConflict(err) {
		t.Fatalf("attaching twice: %v, want Conflict", err)
	}
}
