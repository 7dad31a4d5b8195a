package clientdeploy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/internal/envlist"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/server/client"
	"github.com/cornus-dev/cornus/spec"
)

// envSessionCredentials carries a project's credential sources to the
// session agent, which mints them for it.
const envSessionCredentials = "CORNUS_SESSION_CREDENTIALS"

// credentialSources are a project's credentials with a source, by service
// and name: what this client mints when the server asks.
type credentialSources map[string]map[string]spec.CredentialSource

func credentialsOf(p spec.Project) credentialSources {
	var out credentialSources
	for svc, a := range p.Services {
		for _, c := range a.Credentials {
			if c.Source == nil {
				continue
			}
			if out == nil {
				out = credentialSources{}
			}
			if out[svc] == nil {
				out[svc] = map[string]spec.CredentialSource{}
			}
			out[svc][c.Name] = *c.Source
		}
	}
	return out
}

// refuseLocalRoles: credentials and the docker endpoint are served by
// remote mode's caretaker companions, which a deployment on this machine
// has none of.
func refuseLocalRoles(p spec.Project) error {
	for _, role := range []struct {
		with []string
		what string
	}{{p.ServicesWithCredentials(), "ask for credentials"}, {p.ServicesWithDocker(), "ask for a docker endpoint"}} {
		if len(role.with) > 0 {
			return fmt.Errorf("services %s %s, which a cornus server's caretaker companions serve in its remote mode: deploy with --server (or CORNUS_SERVER), or drop it: %w",
				strings.Join(role.with, ", "), role.what, errdefs.ErrFailedPrecondition)
		}
	}
	return nil
}

// serveCredentials answers the server's credential streams on sess.
func serveCredentials(sess *client.Session, srcs credentialSources, environ []string) {
	if sess == nil || len(srcs) == 0 {
		return
	}
	sess.Handle(api.OpCredential, client.CredentialHandler(srcs, environ))
}

// credentialsEnv is srcs for the session agent's environment.
func credentialsEnv(srcs credentialSources) []string {
	if len(srcs) == 0 {
		return []string{envSessionCredentials + "="}
	}
	b, _ := json.Marshal(srcs)
	return []string{envSessionCredentials + "=" + string(b)}
}

// credentialsFromEnv reads what credentialsEnv wrote.
func credentialsFromEnv(environ []string) (credentialSources, error) {
	raw := envlist.Get(environ, envSessionCredentials)
	if raw == "" {
		return nil, nil
	}
	var srcs credentialSources
	if err := json.Unmarshal([]byte(raw), &srcs); err != nil {
		return nil, fmt.Errorf("%s: %w", envSessionCredentials, err)
	}
	return srcs, nil
}
