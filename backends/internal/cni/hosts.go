package cni

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
)

// maxHostsFile bounds the existing hosts file we read to compare.
const maxHostsFile = 4 << 20

// peer is one resolvable endpoint on a network.
type peer struct {
	ip    netip.Addr
	names []string
}

// peersOn lists the endpoints on network with an address, sorted by IP,
// each with its names deduplicated case-insensitively.
func peersOn(cf containersFile, network string) []peer {
	var ps []peer
	for _, c := range cf.Containers {
		a := c.attachment(network)
		if a == nil || a.Pending || !a.IP.IsValid() {
			continue
		}
		var names []string
		seen := map[string]bool{}
		for _, n := range c.names(a) {
			if k := nameKey(n); !seen[k] && validHostName(n) == nil {
				seen[k] = true
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			ps = append(ps, peer{ip: a.IP, names: names})
		}
	}
	slices.SortFunc(ps, func(a, b peer) int { return a.ip.Compare(b.ip) })
	return ps
}

// renderHosts builds the hosts file of container id: localhost, its own
// hostname, then every endpoint (itself included) on each of its networks
// in attachment order, so glibc's first match prefers the first network.
// Names were validated on the way in and are re-checked here, so no field
// can forge a line. It does no I/O.
func renderHosts(cf containersFile, id string) []byte {
	var b bytes.Buffer
	b.WriteString("# Written by cornus; rewritten as peers come and go.\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	c := cf.Containers[id]
	if c == nil {
		return b.Bytes()
	}
	if c.Hostname != "" && validHostName(c.Hostname) == nil {
		own := netip.AddrFrom4([4]byte{127, 0, 1, 1}) // Debian's convention without an address
		for _, a := range c.Attachments {
			if !a.Pending && a.IP.IsValid() {
				own = a.IP
				break
			}
		}
		fmt.Fprintf(&b, "%s\t%s\n", own, c.Hostname)
	}
	for _, h := range c.ExtraHosts {
		if validHostName(h.Name) == nil && h.IP.IsValid() {
			fmt.Fprintf(&b, "%s\t%s\n", h.IP, h.Name)
		}
	}
	for _, a := range c.Attachments {
		if a.Pending || validID("network name", a.Network) != nil {
			continue
		}
		fmt.Fprintf(&b, "# network %s\n", a.Network)
		for _, p := range peersOn(cf, a.Network) {
			fmt.Fprintf(&b, "%s\t%s\n", p.ip, strings.Join(p.names, " "))
		}
	}
	return b.Bytes()
}

// HostsFile returns the hosts file content of container id as the store
// has it now; an errdefs NotFound for an unknown container.
func (m *Manager) HostsFile(_ context.Context, id string) ([]byte, error) {
	cf, err := m.loadContainers()
	if err != nil {
		return nil, fmt.Errorf("hosts file of %s: %w", id, err)
	}
	if cf.Containers[id] == nil {
		return nil, fmt.Errorf("hosts file of %s: container %w", id, errdefs.ErrNotFound)
	}
	return renderHosts(cf, id), nil
}

// writeHosts puts data at path. A new file appears whole (temp + rename).
// An existing file is overwritten in place, because the caller bind-mounts
// it into the container and a bind mount pins the inode: a rename would
// leave the container reading the old file forever. One pwrite then a
// truncate keeps the window a reader can see mixed content tiny, and we
// skip the write when nothing changed.
func writeHosts(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return writeFileAtomic(path, data, 0o644)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file: %w", path, errdefs.ErrInvalidArgument)
	}
	if fi.Size() == int64(len(data)) && fi.Size() <= maxHostsFile {
		old := make([]byte, fi.Size())
		if n, err := f.ReadAt(old, 0); n == len(old) && bytes.Equal(old, data) {
			return nil
		} else if err != nil && n != len(old) {
			return err
		}
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(data)))
}

// syncHosts rewrites the hosts files of every container on one of networks
// plus container self. self's failure is returned; a peer whose file's dir
// is gone (removed without Detach) is skipped, other peer failures joined.
func syncHosts(cf containersFile, self string, networks []string) (selfErr, peerErr error) {
	var errs []error
	for id, c := range cf.Containers {
		if c.HostsPath == "" {
			continue
		}
		isSelf := id == self
		if !isSelf && !slices.ContainsFunc(networks, func(n string) bool { return c.attachment(n) != nil }) {
			continue
		}
		err := writeHosts(c.HostsPath, renderHosts(cf, id))
		switch {
		case err == nil:
		case isSelf:
			selfErr = fmt.Errorf("hosts file %s: %w", c.HostsPath, err)
		case errors.Is(err, fs.ErrNotExist):
			// dir gone with the container
		default:
			errs = append(errs, fmt.Errorf("hosts file %s of %s: %w", c.HostsPath, id, err))
		}
	}
	return selfErr, errors.Join(errs...)
}

// checkHostsPath wants an absolute path: the file is written from
// whichever process runs the next Attach or Detach, whatever its cwd.
func checkHostsPath(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("hosts path %q must be absolute: %w", p, errdefs.ErrInvalidArgument)
	}
	return nil
}
