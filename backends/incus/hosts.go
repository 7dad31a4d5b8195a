package incus

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

// Name resolution: each container's /etc/hosts is a file in its record
// directory, bind-mounted by its init, that cornus rewrites in place
// whenever a container joins or leaves one of its networks: peers by
// service name, aliases and container name, the container itself, and
// extra_hosts. /etc/resolv.conf points at the spec's DNS servers, else at
// the first network's gateway (Incus's dnsmasq, which forwards).

// hostsHeader is the part of /etc/hosts every container has.
const hostsHeader = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"

// hostsInfo is what the hosts sync reads of a container.
type hostsInfo struct {
	name     string // instance name
	hostname string
	dir      string
	extra    []backends.HostEntry
	nics     []nicPlan
}

func infoOf(in instance) (hostsInfo, bool) {
	c := in.Config
	if c[keyManaged] != "true" || c[keyDir] == "" {
		return hostsInfo{}, false
	}
	h := hostsInfo{name: in.Name, dir: c[keyDir], hostname: in.Name}
	_ = json.Unmarshal([]byte(c[keyNetworks]), &h.nics)
	_ = json.Unmarshal([]byte(c[keyExtraHosts]), &h.extra)
	if raw := c["raw.lxc"]; raw != "" {
		for _, line := range strings.Split(raw, "\n") {
			if v, ok := strings.CutPrefix(line, "lxc.uts.name = "); ok {
				h.hostname = v
			}
		}
	}
	return h, true
}

// hostsFile renders one container's /etc/hosts.
func hostsFile(self hostsInfo, all []hostsInfo) []byte {
	var b strings.Builder
	b.WriteString(hostsHeader)
	if len(self.nics) > 0 {
		names := []string{self.hostname}
		if self.hostname != self.name {
			names = append(names, self.name)
		}
		fmt.Fprintf(&b, "%s\t%s\n", self.nics[0].IP, strings.Join(names, " "))
	}
	for _, e := range self.extra {
		fmt.Fprintf(&b, "%s\t%s\n", e.IP, e.Host)
	}
	for _, n := range self.nics {
		for _, peer := range all {
			if peer.name == self.name {
				continue
			}
			for _, pn := range peer.nics {
				if pn.Bridge != n.Bridge {
					continue
				}
				names := slices.Clone(pn.Aliases)
				if !slices.Contains(names, peer.hostname) {
					names = append(names, peer.hostname)
				}
				fmt.Fprintf(&b, "%s\t%s\n", pn.IP, strings.Join(names, " "))
			}
		}
	}
	return []byte(b.String())
}

// syncHosts rewrites /etc/hosts of every container on the given networks
// (all containers when nics is nil).
func (b *Backend) syncHosts(ctx context.Context, nics []nicPlan) error {
	insts, err := b.listInstances(ctx)
	if err != nil {
		return err
	}
	var all []hostsInfo
	for _, in := range insts {
		if h, ok := infoOf(in); ok {
			all = append(all, h)
		}
	}
	touched := map[string]bool{}
	for _, n := range nics {
		touched[n.Bridge] = true
	}
	for _, h := range all {
		affected := nics == nil
		for _, n := range h.nics {
			affected = affected || touched[n.Bridge]
		}
		if !affected {
			continue
		}
		if err := writeInPlace(filepath.Join(h.dir, "hosts"), hostsFile(h, all)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("update /etc/hosts of %s: %w", h.name, err)
		}
	}
	bridges := map[string]bool{}
	for _, h := range all {
		for _, n := range h.nics {
			bridges[n.Bridge] = nics == nil || touched[n.Bridge]
		}
	}
	for bridge := range touched {
		bridges[bridge] = true
	}
	for bridge, affected := range bridges {
		if !affected || !b.dnsManaged(bridge) {
			continue
		}
		if err := b.writeDNSHosts(bridge, dnsHosts(bridge, all)); err != nil {
			return err
		}
	}
	return nil
}

// Service names also resolve through DNS (nslookup, resolvers that skip
// /etc/hosts): each network cornus manages has its dnsmasq (Incus's, the
// containers' nameserver) read a hosts directory, raw.dnsmasq
// hostsdir=<incus dir>/cornus-dns/<bridge>, which dnsmasq watches, so a
// rewritten file takes effect without a restart. dnsmasq only watches a
// directory that exists when it starts, so a network cornus makes gets
// it at creation; one made before (the default network of
// scripts/incus.sh) is changed once, which restarts its dnsmasq.

// dnsHostsDir is the hosts directory of a bridge's dnsmasq.
func (b *Backend) dnsHostsDir(bridge string) string {
	return filepath.Join(filepath.Dir(b.cfg.socket), "cornus-dns", bridge)
}

// dnsManaged reports whether cornus feeds bridge's dnsmasq: its own
// bridges and the default network, not other Incus networks.
func (b *Backend) dnsManaged(bridge string) bool {
	return strings.HasPrefix(bridge, bridgePrefix) || bridge == b.cfg.network
}

// ensureDNS points the dnsmasq of network n (named bridge) at its hosts
// directory, once (Incus restarts dnsmasq for the change).
func (b *Backend) ensureDNS(ctx context.Context, bridge string, n network) error {
	if !b.dnsManaged(bridge) {
		return nil
	}
	dir := b.dnsHostsDir(bridge)
	line := "hostsdir=" + dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("network %s: dns hosts directory: %w", bridge, err)
	}
	raw := n.Config["raw.dnsmasq"]
	if slices.Contains(strings.Split(raw, "\n"), line) {
		return nil
	}
	if raw != "" && !strings.HasSuffix(raw, "\n") {
		raw += "\n"
	}
	patch := map[string]any{"config": map[string]string{"raw.dnsmasq": raw + line + "\n"}}
	err := retryVanished(ctx, func() error {
		return b.cli.call(ctx, request{method: "PATCH", path: networkPath(bridge), body: patch}, nil)
	})
	if err != nil {
		return fmt.Errorf("network %s: let its dnsmasq resolve service names: %w", bridge, err)
	}
	return nil
}

// dnsHosts renders the hosts file of a bridge's dnsmasq: every
// container's address with its aliases (service names) and hostname.
func dnsHosts(bridge string, all []hostsInfo) []byte {
	var out strings.Builder
	for _, h := range all {
		for _, n := range h.nics {
			if n.Bridge != bridge {
				continue
			}
			names := slices.Clone(n.Aliases)
			if !slices.Contains(names, h.hostname) {
				names = append(names, h.hostname)
			}
			fmt.Fprintf(&out, "%s\t%s\n", n.IP, strings.Join(names, " "))
		}
	}
	return []byte(out.String())
}

// writeDNSHosts replaces the hosts file of a bridge's dnsmasq atomically
// (dnsmasq ignores dot files, so the temporary one is not read half
// written).
func (b *Backend) writeDNSHosts(bridge string, data []byte) error {
	dir := b.dnsHostsDir(bridge)
	if _, err := os.Stat(dir); err != nil {
		return nil // not set up (ensureDNS runs when a container joins)
	}
	tmp := filepath.Join(dir, ".hosts."+randomSuffix())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("network %s: dns hosts: %w", bridge, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "hosts")); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("network %s: dns hosts: %w", bridge, err)
	}
	return nil
}

// writeInPlace rewrites a file keeping its inode: the container sees it
// through a bind mount of that inode.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeResolvConf writes the container's resolv.conf.
func writeResolvConf(dir string, cs backends.ContainerSpec, nics []nicPlan) error {
	var b strings.Builder
	servers := cs.DNS
	if len(servers) == 0 && len(nics) > 0 {
		servers = []string{nics[0].Gateway}
	}
	if len(servers) == 0 {
		servers = hostNameservers()
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(cs.DNSSearch) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(cs.DNSSearch, " "))
	}
	if len(cs.DNSOptions) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(cs.DNSOptions, " "))
	}
	return os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(b.String()), 0o644)
}

// hostNameservers are the host's resolvers that a container can reach
// (not loopback ones).
func hostNameservers() []string {
	f, err := os.Open("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "nameserver" && !strings.HasPrefix(fs[1], "127.") && fs[1] != "::1" {
			out = append(out, fs[1])
		}
	}
	return out
}
