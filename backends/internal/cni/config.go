package cni

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
)

// Environment keys read from the caller's environment (WithEnv).
const (
	EnvBinDir     = "CORNUS_CNI_BIN_DIR"
	EnvCNIPath    = "CNI_PATH"
	EnvSubnetBase = "CORNUS_CNI_SUBNET_BASE"
)

// DefaultSubnetBase is where network subnets are carved from: 10.4.N.0/24.
const DefaultSubnetBase = "10.4"

// defaultPluginDirs follow the user's dirs: the upstream install location,
// then Debian's containernetworking-plugins package.
func defaultPluginDirs() []string { return []string{"/opt/cni/bin", "/usr/lib/cni"} }

// requiredPlugins are the plugin binaries an Attach may run.
func requiredPlugins() []string { return []string{"bridge", "host-local", "portmap"} }

// defaultPath finds iptables when the caller's env has no PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Option configures a Manager. Options do no I/O and may come in any order:
// explicit options beat the environment whatever their position.
type Option func(*config)

type config struct {
	env        []string
	pluginDirs []string
	subnetBase string
}

// WithEnv gives the environment (KEY=VALUE) to read CORNUS_CNI_BIN_DIR,
// CNI_PATH, CORNUS_CNI_SUBNET_BASE and PATH from.
func WithEnv(env []string) Option {
	return func(c *config) { c.env = append([]string(nil), env...) }
}

// WithPluginDirs replaces the plugin search path (environment and defaults).
func WithPluginDirs(dirs ...string) Option {
	return func(c *config) { c.pluginDirs = append([]string(nil), dirs...) }
}

// WithSubnetBase sets the first two octets ("10.4") or the /16
// ("10.4.0.0/16") new networks are carved from, beating the environment.
func WithSubnetBase(base string) Option {
	return func(c *config) { c.subnetBase = base }
}

// Manager runs CNI for one data dir. It holds no open resources; every
// method reads the shared state under its lock, so several Managers (and
// processes) on one data dir agree.
type Manager struct {
	dataDir    string
	pluginDirs []string
	base       [2]byte
	path       string // PATH used to find iptables
}

// New returns a Manager keeping its state under dataDir. It does no I/O:
// missing plugins surface on first use, or earlier through Check.
func New(dataDir string, opts ...Option) (*Manager, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if dataDir == "" || !filepath.IsAbs(dataDir) {
		return nil, fmt.Errorf("cni: data dir %q must be an absolute path: %w", dataDir, errdefs.ErrInvalidArgument)
	}
	env := envMap(c.env)
	m := &Manager{dataDir: filepath.Clean(dataDir), path: env["PATH"]}
	if m.path == "" {
		m.path = defaultPath
	}
	m.pluginDirs = c.pluginDirs
	if m.pluginDirs == nil {
		m.pluginDirs = pluginSearchPath(env)
	}
	base := c.subnetBase
	if base == "" {
		base = env[EnvSubnetBase]
	}
	if base == "" {
		base = DefaultSubnetBase
	}
	b, err := parseSubnetBase(base)
	if err != nil {
		return nil, fmt.Errorf("cni: %s=%q: %w", EnvSubnetBase, base, err)
	}
	m.base = b
	return m, nil
}

// pluginSearchPath is CORNUS_CNI_BIN_DIR, CNI_PATH (colon lists), then the
// default dirs, without duplicates.
func pluginSearchPath(env map[string]string) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(list string) {
		for _, d := range filepath.SplitList(list) {
			if d != "" && !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	add(env[EnvBinDir])
	add(env[EnvCNIPath])
	for _, d := range defaultPluginDirs() {
		add(d)
	}
	return dirs
}

// envMap keeps the last value of each key, as the kernel's execve does.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}

// Paths under the data dir.
func (m *Manager) stateDir() string { return filepath.Join(m.dataDir, "cni") }
func (m *Manager) lockPath() string { return filepath.Join(m.stateDir(), "lock") }
func (m *Manager) networksPath() string {
	return filepath.Join(m.stateDir(), "networks.json")
}
func (m *Manager) containersPath() string {
	return filepath.Join(m.stateDir(), "containers.json")
}
func (m *Manager) cacheDir() string { return filepath.Join(m.stateDir(), "cache") }
func (m *Manager) ipamDir() string  { return filepath.Join(m.stateDir(), "ipam") }
func (m *Manager) netnsDir() string { return filepath.Join(m.dataDir, "netns") }
