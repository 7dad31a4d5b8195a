package cni

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
)

// pickHostPorts gives each port published without a host port (0) one,
// as dockerd does for -p 80, but outside the kernel's ephemeral range
// (eph): portmap's DNAT holds no socket on the port, so the kernel may
// hand a port of that range to a host process binding port 0, whose
// traffic the DNAT would then take (CI72: a test server's on 127.0.0.1,
// sent to a container long gone). The port is one no container publishes
// and the host can bind now; NodePorts' 30000-32767 are left alone too.
func pickHostPorts(cf containersFile, id string, ports []PortMapping, eph [2]int) error {
	idx := publishedPorts(cf, id)
	for i := range ports {
		if ports[i].HostPort != 0 {
			continue
		}
		// From a random port on, every candidate once.
		start, picked := rand.IntN(65536-pickLow), false
		for k := 0; k < 65536-pickLow && !picked; k++ {
			n := pickLow + (start+k)%(65536-pickLow)
			if n >= eph[0] && n <= eph[1] || n >= 30000 && n <= 32767 {
				continue
			}
			p := ports[i]
			p.HostPort = uint16(n)
			if picked = idx.free(p) == nil; picked {
				ports[i] = p
				idx.add(p, id)
			}
		}
		if !picked {
			return fmt.Errorf("port %d/%s: no free host port outside the ephemeral range %d-%d: %w",
				ports[i].ContainerPort, ports[i].Protocol, eph[0], eph[1], errdefs.ErrUnavailable)
		}
	}
	return nil
}

// pickLow is the lowest host port pickHostPorts hands out.
const pickLow = 10000

// ephemeralPorts is the kernel's range for port 0 and outgoing
// connections (net.ipv4.ip_local_port_range; Linux's default if unread).
func ephemeralPorts() [2]int {
	eph := [2]int{32768, 60999}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return eph
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return eph
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo > hi {
		return eph
	}
	return [2]int{lo, hi}
}

// checkPortsFree refuses host ports another container publishes or a
// host process has bound, as dockerd does ("port is already allocated"):
// a DNAT rule alone would silently steal or lose the traffic.
func checkPortsFree(cf containersFile, id string, ports []PortMapping) error {
	idx := publishedPorts(cf, id)
	for _, p := range ports {
		if err := idx.free(p); err != nil {
			return err
		}
	}
	return nil
}

// hostPorts holds who publishes each host port ("port/protocol").
type hostPorts map[string][]publisher

type publisher struct {
	ip        netip.Addr
	container string
}

// publishedPorts indexes the host ports the containers other than id
// publish.
func publishedPorts(cf containersFile, id string) hostPorts {
	idx := hostPorts{}
	for _, c := range cf.Containers {
		if c.ID == id {
			continue
		}
		for _, a := range c.Attachments {
			for _, q := range a.Ports {
				idx.add(q, c.ID)
			}
		}
	}
	return idx
}

func (idx hostPorts) add(p PortMapping, container string) {
	k := hostPortKey(p)
	idx[k] = append(idx[k], publisher{p.HostIP, container})
}

func hostPortKey(p PortMapping) string { return strconv.Itoa(int(p.HostPort)) + "/" + p.Protocol }

// free refuses p's host port if a container publishes it or the host
// cannot bind it.
func (idx hostPorts) free(p PortMapping) error {
	for _, q := range idx[hostPortKey(p)] {
		if ipsOverlap(q.ip, p.HostIP) {
			return portTaken(p, fmt.Sprintf("container %.12s publishes it", q.container))
		}
	}
	if err := bindable(p); err != nil {
		return portTaken(p, err.Error())
	}
	return nil
}

func ipsOverlap(a, b netip.Addr) bool {
	return !a.IsValid() || !b.IsValid() || a.IsUnspecified() || b.IsUnspecified() || a == b
}

// bindable tries the host port once and lets it go.
func bindable(p PortMapping) error {
	ip := "0.0.0.0"
	if p.HostIP.IsValid() {
		ip = p.HostIP.String()
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(int(p.HostPort)))
	if p.Protocol == "udp" {
		c, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return err
	}
	return l.Close()
}

func portTaken(p PortMapping, why string) error {
	ip := "0.0.0.0"
	if p.HostIP.IsValid() {
		ip = p.HostIP.String()
	}
	return fmt.Errorf("bind for %s:%d/%s failed: port is already allocated (%s): %w", ip, p.HostPort, p.Protocol, why, errdefs.ErrConflict)
}
