package cni

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/containernetworking/cni/libcni"
)

// Locks down the conflist the plugins get: bridge without ipMasq (our
// chains masquerade), host-local under our data dir, a default route only
// when asked, portmap only with ports. It is what DEL replays later.
func TestBuildConfList(t *testing.T) {
	n := Network{Name: "shop_default", Subnet: netip.MustParsePrefix("10.4.1.0/24"), Gateway: netip.MustParseAddr("10.4.1.1"), Bridge: "cn-0123456789ab"}
	b, err := buildConfList(n, "/data/cni/ipam", confOptions{defaultRoute: true, ports: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cniVersion":"1.0.0","name":"shop_default","plugins":[` +
		`{"type":"bridge","bridge":"cn-0123456789ab","isGateway":true,"ipMasq":false,"hairpinMode":true,"capabilities":{"ips":true},` +
		`"ipam":{"type":"host-local","dataDir":"/data/cni/ipam","ranges":[[{"subnet":"10.4.1.0/24","gateway":"10.4.1.1"}]],"routes":[{"dst":"0.0.0.0/0"}]}},` +
		`{"type":"portmap","capabilities":{"portMappings":true},"snat":true}]}`
	if string(b) != want {
		t.Fatalf("conflist\n got %s\nwant %s", b, want)
	}
	list, err := libcni.NetworkConfFromBytes(b)
	if err != nil || len(list.Plugins) != 2 || list.Name != n.Name {
		t.Fatalf("libcni reads it as %+v, %v", list, err)
	}
	b, _ = buildConfList(n, "/d", confOptions{})
	var c struct {
		Plugins []struct {
			IPAM struct{ Routes []any } `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b, &c); err != nil || len(c.Plugins) != 1 || c.Plugins[0].IPAM.Routes != nil {
		t.Fatalf("without route and ports: %s", b)
	}
}

// Locks down the portmap capability: lower-case protocol, host IP only
// when it restricts (0.0.0.0 and unset mean every address).
func TestPortMappingsArg(t *testing.T) {
	got := portMappingsArg([]PortMapping{
		{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: 8080, ContainerPort: 80, Protocol: "TCP"},
		{HostIP: netip.IPv4Unspecified(), HostPort: 53, ContainerPort: 53, Protocol: "udp"},
		{HostPort: 1, ContainerPort: 2, Protocol: "tcp"},
	})
	want := []portMappingArg{{8080, 80, "tcp", "127.0.0.1"}, {53, 53, "udp", ""}, {1, 2, "tcp", ""}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
