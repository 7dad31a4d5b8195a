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

// attachCredentials gives the companion a's credentials and the app what
// reaches them: the AWS endpoint's variables (with a token minted for
// this replica), and the file credentials' directory, bound from the
// tmpfs the companion mounts in the shared volume (mountpoint), or, where
// the backend runs the companion as a sidecar, from a directory the two
// share in memory.
func attachCredentials(a spec.App, att *engine.Attachment, cfg *Config, mountpoint string, sidecar bool) {
	files := false
	for _, c := range a.Credentials {
		cfg.Credentials = append(cfg.Credentials, spec.Credential{Name: c.Name, Deliver: c.Deliver})
		if c.Deliver == spec.DeliverAWS {
			tok := make([]byte, 24)
			_, _ = rand.Read(tok)
			cfg.CredentialToken = hex.EncodeToString(tok)
			if att.AppEnv == nil {
				att.AppEnv = map[string]string{}
			}
			att.AppEnv[EnvAWSCredentialsURI] = "http://127.0.0.1:" + strconv.Itoa(CredentialPort) + awsPath(c.Name)
			att.AppEnv[EnvAWSAuthorizationTok] = cfg.CredentialToken
			continue
		}
		files = true
	}
	if !files {
		return
	}
	if sidecar {
		// An emptyDir in memory, which the sidecar writes and the app
		// reads: nothing to mount.
		att.Shared = append(att.Shared, backends.SharedDir{Name: "cornus-credentials", SidecarTarget: sharedPath(credentialsSubdir),
			Target: spec.CredentialDir, ReadOnly: true, Memory: true})
		return
	}
	cfg.MountCredentials = true
	att.AppMounts = append(att.AppMounts, spec.Mount{Source: path.Join(mountpoint, credentialsSubdir), Target: spec.CredentialDir, ReadOnly: true, Propagation: "rslave"})
	mountPrivileges(att)
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
