package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

func containerNames(cs []backends.Container) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// formatPorts renders published ports as docker does:
// "127.0.0.1:8080->80/tcp, 53/udp".
func formatPorts(ps []backends.PortBinding) string {
	sorted := append([]backends.PortBinding(nil), ps...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].ContainerPort != sorted[j].ContainerPort {
			return sorted[i].ContainerPort < sorted[j].ContainerPort
		}
		return sorted[i].HostIP < sorted[j].HostIP
	})
	var out []string
	for _, p := range sorted {
		if p.HostPort == 0 {
			out = append(out, fmt.Sprintf("%d/%s", p.ContainerPort, p.Protocol))
			continue
		}
		ip := p.HostIP
		if strings.Contains(ip, ":") {
			ip = "[" + ip + "]"
		}
		if ip == "" {
			ip = "0.0.0.0"
		}
		out = append(out, fmt.Sprintf("%s:%d->%d/%s", ip, p.HostPort, p.ContainerPort, p.Protocol))
	}
	return strings.Join(out, ", ")
}

// ago renders a past time as docker does: "5 seconds ago".
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return humanDuration(time.Since(t)) + " ago"
}

func humanDuration(d time.Duration) string {
	switch s := int(d.Seconds()); {
	case s < 1:
		return "Less than a second"
	case s == 1:
		return "1 second"
	case s < 60:
		return fmt.Sprintf("%d seconds", s)
	case s < 120:
		return "About a minute"
	case s < 3600:
		return fmt.Sprintf("%d minutes", s/60)
	case s < 7200:
		return "About an hour"
	case s < 48*3600:
		return fmt.Sprintf("%d hours", s/3600)
	default:
		return fmt.Sprintf("%d days", s/86400)
	}
}

// humanSize renders bytes with decimal units, as docker does.
func humanSize(n int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	f := float64(n)
	i := 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	return fmt.Sprintf("%.3g%s", f, units[i])
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
