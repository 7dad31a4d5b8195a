package daemonless

import (
	"fmt"
	"net"
	"strings"

	"github.com/containerd/containerd/v2/core/remotes"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/distribution/reference"
)

// Normalize turns a Docker-style reference into its full name
// (busybox → docker.io/library/busybox:latest).
func Normalize(ref string) (string, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %v: %w", ref, err, errdefs.ErrInvalidArgument)
	}
	return reference.TagNameOnly(n).String(), nil
}

// Familiar is the short form users type (cornus-test/busybox:1).
func Familiar(name string) string {
	if n, err := reference.ParseNormalizedNamed(name); err == nil {
		return reference.FamiliarString(n)
	}
	return name
}

// Resolver is the registry resolver of a pull: registries on loopback,
// and those in Cfg.Insecure, are spoken to over plain HTTP.
func (c *Core) Resolver() remotes.Resolver {
	return docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(c.plainHTTP))})
}

// plainHTTP says whether a registry host is spoken to without TLS.
func (c *Core) plainHTTP(host string) (bool, error) {
	if ok, _ := docker.MatchLocalhost(host); ok {
		return true, nil
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	for _, r := range c.Cfg.Insecure {
		if strings.EqualFold(r, host) || strings.EqualFold(r, h) {
			return true, nil
		}
	}
	return false, nil
}
