package cni

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/containerd/errdefs"
)

// checkPortsFree refuses host ports another container publishes or a
// host process has bound, as dockerd does ("port is already allocated"):
// a DNAT rule alone would silently steal or lose the traffic.
func checkPortsFree(cf containersFile, id string, ports []PortMapping) error {
	for _, p := range ports {
		for _, c := range cf.Containers {
			if c.ID == id {
				continue
			}
			for _, a := range c.Attachments {
				for _, q := range a.Ports {
					if q.HostPort == p.HostPort && q.Protocol == p.Protocol && ipsOverlap(q.HostIP, p.HostIP) {
						return portTaken(p, fmt.Sprintf("container %.12s publishes it", c.ID))
					}
				}
			}
		}
		if err := bindable(p); err != nil {
			return portTaken(p, err.Error())
		}
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
