package incus

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// planPorts chooses the host port of each published port: the given one,
// else the first free one of its range, else one the kernel picks. Fixed
// host ports go to the first replica only (a second would collide); the
// others publish ephemeral ports.
func planPorts(cs backends.ContainerSpec) ([]backends.PortBinding, error) {
	var out []backends.PortBinding
	for i, p := range cs.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = "tcp"
		}
		if proto != "tcp" && proto != "udp" {
			return nil, fmt.Errorf("ports[%d]: protocol %s: Incus proxies tcp and udp only: %w", i, proto, errdefs.ErrNotImplemented)
		}
		host := p.HostPort
		switch {
		case p.HostPortEnd > p.HostPort:
			host = 0
			for port := p.HostPort; port <= p.HostPortEnd; port++ {
				if portFree(proto, p.HostIP, port) {
					host = port
					break
				}
			}
			if host == 0 {
				return nil, fmt.Errorf("ports[%d]: no free host port in %d-%d: %w", i, p.HostPort, p.HostPortEnd, errdefs.ErrConflict)
			}
		case host != 0 && cs.Replica > 1:
			host = 0
		}
		if host == 0 {
			var err error
			if host, err = ephemeralPort(proto, p.HostIP); err != nil {
				return nil, fmt.Errorf("ports[%d]: %w", i, err)
			}
		}
		out = append(out, backends.PortBinding{HostIP: p.HostIP, HostPort: host, ContainerPort: p.ContainerPort, Protocol: proto})
	}
	return out, nil
}

func listenAddr(ip string, port int) string {
	if ip == "" {
		ip = "0.0.0.0"
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

func portFree(proto, ip string, port int) bool {
	if proto == "udp" {
		c, err := net.ListenPacket("udp", listenAddr(ip, port))
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	l, err := net.Listen("tcp", listenAddr(ip, port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralPort asks the kernel for a free port.
func ephemeralPort(proto, ip string) (int, error) {
	if proto == "udp" {
		c, err := net.ListenPacket("udp", listenAddr(ip, 0))
		if err != nil {
			return 0, fmt.Errorf("find a free udp port: %w", err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", listenAddr(ip, 0))
	if err != nil {
		return 0, fmt.Errorf("find a free tcp port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkPorts fails when another process holds a published host port, in
// the words Docker uses: Incus's proxy device would fail on it too, with
// a message that does not say why.
func checkPorts(in instance) error {
	var ports []backends.PortBinding
	if json.Unmarshal([]byte(in.Config[keyPorts]), &ports) != nil {
		return nil
	}
	for _, p := range ports {
		var err error
		if p.Protocol == "udp" {
			var c net.PacketConn
			if c, err = net.ListenPacket("udp", listenAddr(p.HostIP, p.HostPort)); err == nil {
				c.Close()
			}
		} else {
			var l net.Listener
			if l, err = net.Listen("tcp", listenAddr(p.HostIP, p.HostPort)); err == nil {
				l.Close()
			}
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("publish port %s/%s: %w: %w", listenAddr(p.HostIP, p.HostPort), p.Protocol, err, errdefs.ErrConflict)
		}
	}
	return nil
}
