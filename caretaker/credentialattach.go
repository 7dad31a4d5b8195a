package caretaker

import (
	"crypto/rand"
	"encoding/hex"
	"path"
	"slices"
	"strconv"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/spec"
)

// AWS container-credentials variables the app gets for its aws credential.
const (
	EnvAWSCredentialsURI   = "AWS_CONTAINER_CREDENTIALS_FULL_URI"
	EnvAWSAuthorizationTok = "AWS_CONTAINER_AUTHORIZATION_TOKEN"
)

// credentialsHome is where the file credentials live, in memory.
type credentialsHome int

const (
	// credentialsMounted: on a tmpfs the companion mounts in the volume it
	// shares with the app (the mount propagates to the runtime's host).
	credentialsMounted credentialsHome = iota
	// credentialsInVolume: in the shared volume, itself a tmpfs (a
	// companion beside its app, whose mounts reach no one: besideOpts).
	credentialsInVolume
	// credentialsInSidecar: in a directory the sidecar and its app share
	// in memory (a pod's emptyDir).
	credentialsInSidecar
)

// attachCredentials gives the companion a's credentials and the app what
// reaches them: the AWS endpoint's variables (with a token minted for
// this replica; beside the app, its loopback port passed to the
// endpoint's socket in the shared volume), and the file credentials'
// directory, bound from the shared volume (mountpoint) or shared with the
// sidecar, as home says.
func attachCredentials(a spec.App, att *engine.Attachment, cfg *Config, mountpoint string, home credentialsHome) {
	files := false
	for _, c := range a.Credentials {
		cfg.Credentials = append(cfg.Credentials, spec.Credential{Name: c.Name, Deliver: c.Deliver, Variable: c.Variable})
		if c.Deliver == spec.DeliverAWS {
			tok := make([]byte, 24)
			_, _ = rand.Read(tok)
			cfg.CredentialToken = hex.EncodeToString(tok)
			if att.AppEnv == nil {
				att.AppEnv = map[string]string{}
			}
			att.AppEnv[EnvAWSCredentialsURI] = "http://127.0.0.1:" + strconv.Itoa(CredentialPort) + awsPath(c.Name)
			att.AppEnv[EnvAWSAuthorizationTok] = cfg.CredentialToken
			if home == credentialsInVolume { // beside the app: its loopback is not the companion's
				att.AppLoopback = append(att.AppLoopback, backends.LoopbackSocket{Port: CredentialPort, Socket: path.Join(mountpoint, awsSubdir, awsSocket)})
			}
			continue
		}
		files = true
	}
	if !files {
		return
	}
	switch home {
	case credentialsInSidecar:
		// An emptyDir in memory, which the sidecar writes and the app
		// reads: nothing to mount.
		att.Shared = append(att.Shared, backends.SharedDir{Name: "cornus-credentials", SidecarTarget: sharedPath(credentialsSubdir),
			Target: spec.CredentialDir, ReadOnly: true, Memory: true})
	case credentialsInVolume:
		att.AppMounts = append(att.AppMounts, spec.Mount{Source: path.Join(mountpoint, credentialsSubdir), Target: spec.CredentialDir, ReadOnly: true})
	default:
		cfg.MountCredentials = true
		att.AppMounts = append(att.AppMounts, spec.Mount{Source: path.Join(mountpoint, credentialsSubdir), Target: spec.CredentialDir, ReadOnly: true, Propagation: "rslave"})
		mountPrivileges(att)
	}
}

// mountPrivileges lets the companion mount in its own mount namespace
// (client-local mounts, the credentials' tmpfs), propagated to the host
// path of the shared volume only. Where AppArmor confines containers, its
// default profile forbids mount(2) even with the capability.
func mountPrivileges(att *engine.Attachment) {
	if slices.Contains(att.Companion.CapAdd, "SYS_ADMIN") {
		return
	}
	att.Companion.CapAdd = append(att.Companion.CapAdd, "SYS_ADMIN")
	att.Companion.SecurityOpt = append(att.Companion.SecurityOpt, "apparmor=unconfined")
}
