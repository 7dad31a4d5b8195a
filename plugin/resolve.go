package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/boundedfile"
)

// Environment variables the docker CLI and the dockerhost backend share.
const (
	EnvDockerHost    = "DOCKER_HOST"
	EnvDockerContext = "DOCKER_CONTEXT"
	EnvDockerConfig  = "DOCKER_CONFIG"
	EnvTLSVerify     = "DOCKER_TLS_VERIFY"
	EnvCertPath      = "DOCKER_CERT_PATH"
)

// DefaultContext is the docker CLI's built-in context: DOCKER_HOST as set,
// else the default socket.
const DefaultContext = "default"

// defaultUnixSocket is where `-H unix://` points, as in the docker CLI.
const defaultUnixSocket = "/var/run/docker.sock"

// ResolveOptions are the docker global options and the environ the plugin
// was started with.
type ResolveOptions struct {
	Globals GlobalOptions
	Environ []string // KEY=VALUE
}

// ResolveResult is the environ cornus should run with and how the daemon
// was chosen.
type ResolveResult struct {
	Environ  []string // a new slice; the input is not modified
	Context  string   // the docker context in effect ("default" for -H and DOCKER_HOST)
	Source   string   // what chose it: "-H", "--context", "DOCKER_HOST", "DOCKER_CONTEXT", "<config.json> currentContext" or "default"
	Host     string   // the DOCKER_HOST cornus will use; "" leaves cornus's own default (CORNUS_DOCKER_SOCK, else the default socket)
	Warnings []string // e.g. TLS asked for but not used by the backend
}

// Resolve picks the daemon the way the docker CLI does and returns the
// environ that makes the dockerhost backend use it. Precedence, as in
// docker/cli's resolveContextName: --context; else -H; else DOCKER_HOST
// from the environment (the default context); else DOCKER_CONTEXT; else
// currentContext in <config dir>/config.json; else the default context.
// --context together with -H, or -H given twice, is an error as in the
// docker CLI. A named context's docker endpoint Host becomes DOCKER_HOST
// (read from <config dir>/contexts/meta/<sha256(name)>/meta.json); the
// config dir is --config, else DOCKER_CONFIG, else $HOME/.docker.
// --config is passed on as DOCKER_CONFIG; TLS options as DOCKER_TLS_VERIFY
// and DOCKER_CERT_PATH (see the package doc for what is not supported).
func Resolve(o ResolveOptions) (ResolveResult, error) {
	g := o.Globals
	env := slices.Clone(o.Environ)
	r := ResolveResult{Context: DefaultContext, Source: "default"}
	if g.Config != "" {
		env = setEnv(env, EnvDockerConfig, g.Config)
	}
	if len(g.Hosts) > 1 {
		return ResolveResult{}, fmt.Errorf("-H %s: specify only one -H: %w", strings.Join(g.Hosts, " -H "), errdefs.ErrInvalidArgument)
	}
	if g.Context != "" && len(g.Hosts) > 0 {
		return ResolveResult{}, fmt.Errorf("conflicting options: cannot specify both --host and --context: %w", errdefs.ErrInvalidArgument)
	}
	configDir := func() (string, error) { return dockerConfigDir(g.Config, env) }

	name, env, err := chooseContext(g, env, configDir, &r)
	if err != nil {
		return ResolveResult{}, err
	}
	if name != "" && name != DefaultContext {
		dir, err := configDir()
		if err != nil {
			return ResolveResult{}, err
		}
		ep, err := readContext(dir, name)
		if err != nil {
			return ResolveResult{}, fmt.Errorf("%s: %w", r.Source, err)
		}
		env = contextEnv(env, ep)
		if (ep.certPath != "" || ep.skipTLSVerify) && !strings.HasPrefix(ep.host, "unix://") {
			r.Warnings = append(r.Warnings, fmt.Sprintf("docker context %q uses TLS, which cornus's dockerhost backend does not support yet; connecting to %s without TLS", name, ep.host))
		}
		r.Context, r.Host = name, ep.host
	} else if name == DefaultContext {
		r.Host = getEnv(env, EnvDockerHost)
	}

	env, err = applyTLS(g, env, configDir)
	if err != nil {
		return ResolveResult{}, err
	}
	if g.tlsRequested() {
		r.Warnings = append(r.Warnings, "TLS options are passed on as DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, but cornus's dockerhost backend does not support TLS yet")
	}
	r.Environ = env
	return r, nil
}

// chooseContext picks the endpoint as the docker CLI does: --context, -H
// (set as DOCKER_HOST), DOCKER_HOST, DOCKER_CONTEXT, then the config's
// currentContext. It returns the context's name ("" for an endpoint given
// directly) and records the source, and the host when it is known, in r.
func chooseContext(g GlobalOptions, env []string, configDir func() (string, error), r *ResolveResult) (string, []string, error) {
	name := ""
	switch {
	case g.Context != "":
		name, r.Source = g.Context, "--context"
	case len(g.Hosts) == 1:
		verify := getEnv(env, EnvTLSVerify) != ""
		if g.TLSVerify != nil {
			verify = *g.TLSVerify
		}
		host, err := parseHost(g.Hosts[0], verify || g.TLS)
		if err != nil {
			return "", nil, err
		}
		env = setEnv(env, EnvDockerHost, host)
		r.Source, r.Host = "-H", host
	case getEnv(env, EnvDockerHost) != "":
		r.Source, r.Host = EnvDockerHost, getEnv(env, EnvDockerHost)
	case getEnv(env, EnvDockerContext) != "":
		name, r.Source = getEnv(env, EnvDockerContext), EnvDockerContext
	default:
		dir, err := configDir()
		if err != nil {
			return "", nil, err
		}
		cur, err := currentContext(dir)
		if err != nil {
			return "", nil, err
		}
		if cur != "" {
			name, r.Source = cur, filepath.Join(dir, "config.json")+" currentContext"
		}
	}
	return name, env, nil
}

// contextEnv replaces the default context's DOCKER_HOST and TLS
// environment entirely with a context's endpoint.
func contextEnv(env []string, ep dockerEndpoint) []string {
	env = unsetEnv(env, EnvDockerHost, EnvTLSVerify, EnvCertPath)
	env = setEnv(env, EnvDockerHost, ep.host)
	if ep.certPath != "" {
		env = setEnv(env, EnvCertPath, ep.certPath)
	}
	if ep.certPath != "" && !ep.skipTLSVerify {
		env = setEnv(env, EnvTLSVerify, "1")
	}
	return env
}

// applyTLS maps the TLS flags onto DOCKER_TLS_VERIFY and DOCKER_CERT_PATH,
// the only form the environment can carry: the three files must be
// ca.pem, cert.pem and key.pem in one directory (the flags' defaults live
// in DOCKER_CERT_PATH, else the config dir, as in the docker CLI).
func applyTLS(g GlobalOptions, env []string, configDir func() (string, error)) ([]string, error) {
	if g.TLSVerify != nil {
		if *g.TLSVerify {
			env = setEnv(env, EnvTLSVerify, "1")
		} else {
			env = unsetEnv(env, EnvTLSVerify)
		}
	}
	if !g.tlsRequested() {
		return env, nil
	}
	def := getEnv(env, EnvCertPath)
	if def == "" {
		d, err := configDir()
		if err != nil {
			return nil, err
		}
		def = d
	}
	dir := ""
	given := 0
	for _, f := range []struct{ flag, path, base string }{
		{"--tlscacert", g.TLSCACert, "ca.pem"},
		{"--tlscert", g.TLSCert, "cert.pem"},
		{"--tlskey", g.TLSKey, "key.pem"},
	} {
		if f.path == "" {
			continue
		}
		given++
		d := filepath.Dir(f.path)
		if filepath.Base(f.path) != f.base || (dir != "" && d != dir) {
			return nil, fmt.Errorf("%s %s: cornus passes TLS files on as DOCKER_CERT_PATH, so they must be ca.pem, cert.pem and key.pem in one directory: %w", f.flag, f.path, errdefs.ErrNotImplemented)
		}
		dir = d
	}
	switch {
	case dir == "":
		dir = def
	case given < 3 && filepath.Clean(dir) != filepath.Clean(def):
		return nil, fmt.Errorf("TLS files in %s mixed with defaults in %s: cornus passes TLS files on as DOCKER_CERT_PATH, so give all of --tlscacert, --tlscert and --tlskey from one directory: %w", dir, def, errdefs.ErrNotImplemented)
	}
	return setEnv(env, EnvCertPath, dir), nil
}

// parseHost normalizes a -H value like the docker CLI: no scheme means
// tcp://, a tcp address without a port gets 2375 (2376 with TLS), and
// unix:// alone is the default socket.
func parseHost(h string, tls bool) (string, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return "", fmt.Errorf("-H %q: empty daemon address: %w", h, errdefs.ErrInvalidArgument)
	}
	proto, addr, ok := strings.Cut(h, "://")
	if !ok {
		proto, addr = "tcp", h
	}
	switch proto {
	case "unix":
		if addr == "" {
			addr = defaultUnixSocket
		}
	case "tcp":
		hostport, path, _ := strings.Cut(addr, "/")
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			host, port = hostport, "2375"
			if tls {
				port = "2376"
			}
		}
		if host == "" {
			host = "localhost"
		}
		addr = net.JoinHostPort(host, port)
		if path != "" {
			addr += "/" + path
		}
	}
	return proto + "://" + addr, nil
}

// dockerConfigDir is --config, else DOCKER_CONFIG, else $HOME/.docker.
func dockerConfigDir(flag string, env []string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := getEnv(env, EnvDockerConfig); d != "" {
		return d, nil
	}
	if h := getEnv(env, homeVar); h != "" {
		return filepath.Join(h, ".docker"), nil
	}
	return "", fmt.Errorf("cannot find the docker config directory: set DOCKER_CONFIG or %s, or pass --config: %w", homeVar, errdefs.ErrInvalidArgument)
}

// currentContext reads currentContext from <dir>/config.json; a missing
// file means none.
func currentContext(dir string) (string, error) {
	path := filepath.Join(dir, "config.json")
	b, err := boundedfile.Read(path, boundedfile.DockerConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read docker config: %w", err)
	}
	var cfg struct {
		CurrentContext string `json:"currentContext"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("docker config %s: %w: %w", path, errdefs.ErrInvalidArgument, err)
	}
	return cfg.CurrentContext, nil
}

// contextMeta is the part of a docker context's meta.json cornus reads.
type contextMeta struct {
	Name      string
	Endpoints map[string]struct {
		Host          string
		SkipTLSVerify bool
	}
}

type dockerEndpoint struct {
	host          string
	skipTLSVerify bool
	certPath      string // the context's TLS directory, when it has one
}

// contextDigest names a context's directories in the store, as
// docker/cli's context store does: the hex SHA-256 of the name.
func contextDigest(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// readContext reads the docker endpoint of context name from the store
// under the config dir.
func readContext(dir, name string) (dockerEndpoint, error) {
	digest := contextDigest(name)
	path := filepath.Join(dir, "contexts", "meta", digest, "meta.json")
	b, err := boundedfile.Read(path, boundedfile.DockerConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return dockerEndpoint{}, fmt.Errorf("docker context %q does not exist (no %s): list contexts with `docker context ls`: %w", name, path, errdefs.ErrNotFound)
	}
	if err != nil {
		return dockerEndpoint{}, fmt.Errorf("read docker context %q: %w", name, err)
	}
	var m contextMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return dockerEndpoint{}, fmt.Errorf("docker context %q: %s: %w: %w", name, path, errdefs.ErrInvalidArgument, err)
	}
	ep, ok := m.Endpoints["docker"]
	if !ok || ep.Host == "" {
		return dockerEndpoint{}, fmt.Errorf("docker context %q has no docker endpoint host (%s): %w", name, path, errdefs.ErrInvalidArgument)
	}
	out := dockerEndpoint{host: ep.Host, skipTLSVerify: ep.SkipTLSVerify}
	tls := filepath.Join(dir, "contexts", "tls", digest, "docker")
	if fi, err := os.Stat(tls); err == nil && fi.IsDir() {
		out.certPath = tls
	}
	return out, nil
}

// getEnv returns key's value in env; the last entry wins, as in a shell.
func getEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return strings.TrimSpace(v)
}

// setEnv returns env with every key entry replaced by one key=value.
func setEnv(env []string, key, value string) []string {
	return append(unsetEnv(env, key), key+"="+value)
}

// unsetEnv returns env without the entries for keys.
func unsetEnv(env []string, keys ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(keys, k)
	})
}
