package cni

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
)

// installHint says what to do about a missing plugin; Debian 12 is the
// supported host, and its containernetworking-plugins package installs
// them in /usr/lib/cni.
const installHint = `install them with "apt-get install -y containernetworking-plugins" (Debian puts them in /usr/lib/cni) or set ` + EnvBinDir + ` to the dir that holds them`

// Check reports the first missing prerequisite: a plugin of bridge,
// host-local, portmap, or iptables. The error is an errdefs
// FailedPrecondition that says what to install.
func (m *Manager) Check() error {
	for _, p := range requiredPlugins() {
		if err := m.findPlugin(p); err != nil {
			return err
		}
	}
	_, err := m.iptablesBin()
	return err
}

// findPlugin fails unless an executable called name is in a plugin dir.
func (m *Manager) findPlugin(name string) error {
	for _, d := range m.pluginDirs {
		if isExecutable(filepath.Join(d, name)) {
			return nil
		}
	}
	return fmt.Errorf("cni: plugin %q not found in %s: %s: %w",
		name, strings.Join(m.pluginDirs, ":"), installHint, errdefs.ErrFailedPrecondition)
}

// iptablesBin finds iptables on the caller's PATH; the firewall rules of
// networks (see doc.go) need it, as do the bridge and portmap plugins.
func (m *Manager) iptablesBin() (string, error) {
	for _, d := range filepath.SplitList(m.path) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "iptables")
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf(`cni: iptables not found on PATH %s: install it with "apt-get install -y iptables": %w`,
		m.path, errdefs.ErrFailedPrecondition)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
