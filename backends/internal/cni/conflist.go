package cni

import (
	"encoding/json"
	"io"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/version"
)

// cniVersion is the newest spec Debian's plugins (1.1.1) speak; libcni
// v1.3 would happily ask for 1.1.0, which they refuse.
const cniVersion = "1.0.0"

// conflist is a CNI network configuration list as the plugins read it.
type conflist struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []any  `json:"plugins"`
}

type bridgeConf struct {
	Type         string          `json:"type"`
	Bridge       string          `json:"bridge"`
	IsGateway    bool            `json:"isGateway"`
	IPMasq       bool            `json:"ipMasq"`
	HairpinMode  bool            `json:"hairpinMode"`
	Capabilities map[string]bool `json:"capabilities"`
	IPAM         ipamConf        `json:"ipam"`
}

type ipamConf struct {
	Type    string        `json:"type"`
	DataDir string        `json:"dataDir"`
	Ranges  [][]ipamRange `json:"ranges"`
	Routes  []ipamRoute   `json:"routes,omitempty"`
}

type ipamRange struct {
	Subnet  string `json:"subnet"`
	Gateway string `json:"gateway"`
}

type ipamRoute struct {
	Dst string `json:"dst"`
}

type portmapConf struct {
	Type         string          `json:"type"`
	Capabilities map[string]bool `json:"capabilities"`
	SNAT         bool            `json:"snat"`
}

// confOptions vary per attachment: the default route goes through one
// network only (two would clash), and portmap runs only where ports are.
type confOptions struct {
	defaultRoute bool
	ports        bool
}

// buildConfList renders the conflist of one attachment. It does no I/O.
// libcni caches these exact bytes with the result, and DEL replays them,
// so a later change of this function never breaks detaching old containers.
func buildConfList(n Network, ipamDir string, o confOptions) ([]byte, error) {
	ipam := ipamConf{
		Type:    "host-local",
		DataDir: ipamDir,
		Ranges:  [][]ipamRange{{{Subnet: n.Subnet.String(), Gateway: n.Gateway.String()}}},
	}
	if o.defaultRoute {
		ipam.Routes = []ipamRoute{{Dst: "0.0.0.0/0"}}
	}
	plugins := []any{bridgeConf{
		Type:      "bridge",
		Bridge:    n.Bridge,
		IsGateway: true,
		// Masquerade is ours, per network (see doc.go).
		IPMasq: false,
		// Hairpin lets a container reach its own published port.
		HairpinMode:  true,
		Capabilities: map[string]bool{"ips": true},
		IPAM:         ipam,
	}}
	if o.ports {
		plugins = append(plugins, portmapConf{
			Type:         "portmap",
			Capabilities: map[string]bool{"portMappings": true},
			// SNAT makes 127.0.0.1:port reach the container.
			SNAT: true,
		})
	}
	return json.Marshal(conflist{CNIVersion: cniVersion, Name: n.Name, Plugins: plugins})
}

// cniConfig runs plugins from our dirs with results cached under our data
// dir; plugin stderr chatter on success is dropped (failures carry it).
func (m *Manager) cniConfig() *libcni.CNIConfig {
	exec := &invoke.DefaultExec{RawExec: &invoke.RawExec{Stderr: io.Discard}, PluginDecoder: version.PluginDecoder{}}
	return libcni.NewCNIConfigWithCacheDir(m.pluginDirs, m.cacheDir(), exec)
}

// portMappingsArg is portmap's runtimeConfig.portMappings capability.
type portMappingArg struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

func portMappingsArg(ports []PortMapping) []portMappingArg {
	out := make([]portMappingArg, 0, len(ports))
	for _, p := range ports {
		a := portMappingArg{HostPort: int(p.HostPort), ContainerPort: int(p.ContainerPort), Protocol: strings.ToLower(p.Protocol)}
		if p.HostIP.IsValid() && !p.HostIP.IsUnspecified() {
			a.HostIP = p.HostIP.String()
		}
		out = append(out, a)
	}
	return out
}

// staticIPArg is the "ips" capability host-local reads.
func staticIPArg(ip netip.Addr) []string { return []string{ip.String()} }
