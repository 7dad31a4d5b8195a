package caretaker

import (
	"encoding/json"
	"fmt"

	"github.com/cornus-dev/cornus/spec"
)

// Environment of the companion.
const (
	// EnvConfig holds the Config as JSON.
	EnvConfig = "CORNUS_CARETAKER"
	// EnvToken holds the deployment's caretaker token (valid only on its
	// relay).
	EnvToken = "CORNUS_CARETAKER_TOKEN"
)

// maxConfig bounds the config (a PAC script is at most 1 MiB).
const maxConfig = 2 << 20

// maxMounts bounds the mounts of one companion (api.MaxLocalMounts).
const maxMounts = 64

// Ports of the egress role on the replica's loopback.
const (
	ProxyPort    = 3128  // proxy mode: HTTP and SOCKS5
	RedirectPort = 15001 // transparent mode: the redirect's target
)

// ReadySocket is the abstract unix socket (of the replica's network
// namespace) the caretaker listens on once every role is in place: the
// engine starts the app only then. Not a file: the companion's root file
// system is read-only, and the socket goes with the process (a restarted
// caretaker is not ready before its roles are again).
const ReadySocket = "@cornus-caretaker-ready"

// Config is what one companion does.
type Config struct {
	Project string `json:"project"`
	Service string `json:"service"`
	Replica int    `json:"replica"`
	// Server is the URL the companion dials back to (relayed routes);
	// empty for a local deployment, where relayed routes are refused.
	Server string `json:"server,omitempty"`
	// ServerCA is the PEM of the server's CA, when it is not in the
	// system pool.
	ServerCA string       `json:"serverCA,omitempty"`
	Egress   *spec.Egress `json:"egress,omitempty"`
	// Mounts are the client-local mounts of the mount role (remote mode):
	// each is mounted under SharedDir, which the app sees through the
	// shared volume.
	Mounts []Mount `json:"mounts,omitempty"`
	// Remote runs the roles every replica of a remote-mode deployment
	// gets: portforward (dial streams from the server, dialed in this
	// network namespace) and agent (ssh-agent sockets for exec
	// --forward-agent).
	Remote bool `json:"remote,omitempty"`
	// Credentials are the credential role's (credential.go);
	// CredentialToken is what the app's AWS SDK must send to the AWS
	// endpoint (its AWS_CONTAINER_AUTHORIZATION_TOKEN).
	// (A credential's source is the client's: never in JSON.)
	Credentials     []spec.Credential `json:"credentials,omitempty"`
	CredentialToken string            `json:"credentialToken,omitempty"`
	// MountCredentials: the companion mounts the file credentials' tmpfs
	// itself (a volume it shares with the app); else their directory is
	// in memory already (a sidecar's emptyDir).
	MountCredentials bool `json:"mountCredentials,omitempty"`
	// Docker serves the docker role's socket (docker.go).
	Docker bool `json:"docker,omitempty"`
	// Sibling: the companion runs beside its app (remote mode on a
	// runtime whose containers cannot share a network namespace): the
	// portforward role dials the address the server names.
	Sibling bool `json:"sibling,omitempty"`
}

// Mount is one client-local mount of the mount role.
type Mount struct {
	// Index names the client's export (api.MountOpen).
	Index    int  `json:"index"`
	ReadOnly bool `json:"readOnly,omitempty"`
	// File is set where the app binds the export's single file: the
	// companion pins it (pinnedFile) before it is ready, and the app
	// binds the pin, never the file's path in the mount. Absent from an
	// older config: a directory, as before.
	File string `json:"file,omitempty"`
}

// Parse reads a Config from its JSON.
func Parse(raw string) (Config, error) {
	var c Config
	if len(raw) > maxConfig {
		return c, fmt.Errorf("%s: %d bytes, more than the %d allowed", EnvConfig, len(raw), maxConfig)
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, fmt.Errorf("%s: %w", EnvConfig, err)
	}
	if c.Project == "" || c.Service == "" {
		return c, fmt.Errorf("%s: project and service are required", EnvConfig)
	}
	if len(c.Mounts) > maxMounts {
		return c, fmt.Errorf("%s: %d mounts, at most %d", EnvConfig, len(c.Mounts), maxMounts)
	}
	seen := map[int]bool{}
	for i, m := range c.Mounts {
		if m.Index < 0 || m.Index >= maxMounts || seen[m.Index] {
			return c, fmt.Errorf("%s: mounts[%d]: index %d is out of range or repeated", EnvConfig, i, m.Index)
		}
		seen[m.Index] = true
		if !fileName(m.File) {
			return c, fmt.Errorf("%s: mounts[%d]: file %q is not a file name", EnvConfig, i, m.File)
		}
	}
	if (len(c.Mounts) > 0 || c.Remote || len(c.Credentials) > 0) && c.Server == "" {
		return c, fmt.Errorf("%s: the mount, portforward, agent and credential roles need the server to dial back to", EnvConfig)
	}
	if err := spec.ValidateCredentials("credentials", c.Credentials); err != nil {
		return c, fmt.Errorf("%s: %w", EnvConfig, err)
	}
	if c.Egress != nil {
		if err := c.Egress.Validate("egress"); err != nil {
			return c, fmt.Errorf("%s: %w", EnvConfig, err)
		}
	}
	return c, nil
}

// Encode is the JSON of c for EnvConfig.
func (c Config) Encode() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// NeedsCompanion reports whether an app's egress needs a companion
// (proxy and transparent modes; env mode is variables only).
func NeedsCompanion(a spec.App) bool {
	return a.Egress != nil && (a.Egress.Mode == spec.EgressProxy || a.Egress.Mode == spec.EgressTransparent)
}

// ProxyEnv is what proxy mode sets in the app: every variable points at the
// companion, and nothing bypasses it (the companion dials cluster routes,
// loopback included, itself).
func ProxyEnv() map[string]string {
	u := fmt.Sprintf("http://127.0.0.1:%d", ProxyPort)
	s := fmt.Sprintf("socks5://127.0.0.1:%d", ProxyPort)
	return map[string]string{
		"HTTP_PROXY": u, "HTTPS_PROXY": u, "ALL_PROXY": s, "NO_PROXY": "",
		"http_proxy": u, "https_proxy": u, "all_proxy": s, "no_proxy": "",
	}
}
