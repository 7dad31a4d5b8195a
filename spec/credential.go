package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Credential is one credential an app may ask its client for (the
// caretaker's credential role, remote mode): the client mints it on
// demand from Source, the server relays it without keeping it, and the
// caretaker delivers it as Deliver says.
type Credential struct {
	// Name names it on the wire and in the app (a file's name).
	Name string `yaml:"name" json:"name"`
	// Deliver is how the app receives it: "file" (the default), a file
	// /run/cornus-credentials/<name> on a tmpfs, rewritten before it
	// expires; or "aws", the AWS container-credentials endpoint on the
	// replica's loopback (AWS_CONTAINER_CREDENTIALS_FULL_URI and its
	// authorization token set in the app), which the AWS SDKs and CLI
	// read by themselves; or "env", the variable Variable in the app's
	// process, set from the file when the process starts (a refresh
	// reaches the file, not a running process's environment).
	Deliver string `yaml:"deliver,omitempty" json:"deliver,omitempty"`
	// Variable names the environment variable of an "env" delivery.
	Variable string `yaml:"variable,omitempty" json:"variable,omitempty"`
	// Source is where the client mints it. It is the client's alone: it
	// never travels to a server (no JSON).
	Source *CredentialSource `yaml:"source,omitempty" json:"-"`
}

// CredentialSource is where a client mints a credential: exactly one of
// Command, File, Env, Helper.
type CredentialSource struct {
	// Command is run (no shell) each time the credential is needed; it
	// prints the credential. When what it prints is a JSON object with
	// "Expiration" (AWS's credential_process) or "expiration" (RFC 3339),
	// the credential is minted again before then.
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// File is read each time (relative to the project's directory).
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Env names a variable of the client's environment.
	Env string `yaml:"env,omitempty" json:"env,omitempty"`
	// Helper is a docker credential helper (docker-credential-<helper>)
	// asked for Registry's login: the credential is a Docker config.json
	// holding it (name it config.json and set DOCKER_CONFIG to
	// CredentialDir in the app).
	Helper   string `yaml:"helper,omitempty" json:"helper,omitempty"`
	Registry string `yaml:"registry,omitempty" json:"registry,omitempty"`
}

// InDir is s with its relative paths made absolute against dir as a
// spec's other paths are (resolvePath): a file, and a command named by a
// path ("./mint-token", not "aws", which is looked up on PATH).
func (s CredentialSource) InDir(dir string) CredentialSource {
	s.File = resolvePath(dir, s.File)
	if len(s.Command) > 0 && strings.ContainsRune(s.Command[0], filepath.Separator) {
		s.Command = append([]string{resolvePath(dir, s.Command[0])}, s.Command[1:]...)
	}
	return s
}

// ServicesWithCredentials are the names of p's services that declare
// credentials, sorted.
func (p Project) ServicesWithCredentials() []string {
	return p.servicesWith(func(a App) bool { return len(a.Credentials) > 0 })
}

// ServicesWithDocker are the names of p's services that ask for the
// docker endpoint, sorted.
func (p Project) ServicesWithDocker() []string {
	return p.servicesWith(func(a App) bool { return a.Docker })
}

func (p Project) servicesWith(has func(App) bool) []string {
	var with []string
	for name, a := range p.Services {
		if has(a) {
			with = append(with, name)
		}
	}
	slices.Sort(with)
	return with
}

// Credential deliveries.
const (
	DeliverFile = "file"
	DeliverAWS  = "aws"
	DeliverEnv  = "env"
)

// CredentialDir is where an app finds its file credentials.
const CredentialDir = "/run/cornus-credentials"

// MaxCredentials bounds an app's credentials.
const MaxCredentials = 32

var (
	credentialNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	variableRE       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	helperNameRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
)

// ValidCredentialName reports whether name may name a credential (it
// names a file in the app).
func ValidCredentialName(name string) bool { return credentialNameRE.MatchString(name) }

// ValidateCredentials checks credentials found at at (a Compose
// extension, say).
func ValidateCredentials(at string, cs []Credential) error {
	var ps Problems
	validateCredentials(at, cs, &ps)
	return ps.Err("")
}

// validateCredentials checks an app's credentials: valid unique names,
// a known delivery (one AWS endpoint at most: its variables are one per
// app; a variable of its own for each env delivery), and, where given,
// one source.
func validateCredentials(at string, cs []Credential, ps *Problems) {
	if len(cs) > MaxCredentials {
		ps.add(at, "%d credentials, at most %d", len(cs), MaxCredentials)
		return
	}
	seen, vars := map[string]bool{}, map[string]bool{}
	aws := 0
	for i, c := range cs {
		ci := fmt.Sprintf("%s[%d]", at, i)
		if !ValidCredentialName(c.Name) {
			ps.add(ci+".name", "%q: want 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Name)
		} else if seen[c.Name] {
			ps.add(ci+".name", "%q is named twice", c.Name)
		}
		seen[c.Name] = true
		switch c.Deliver {
		case "", DeliverFile:
		case DeliverAWS:
			if aws++; aws == 2 {
				ps.add(ci+".deliver", "a second aws credential: the AWS SDKs read one endpoint per app (AWS_CONTAINER_CREDENTIALS_FULL_URI)")
			}
		case DeliverEnv:
			switch {
			case !variableRE.MatchString(c.Variable):
				ps.add(ci+".variable", "%q: deliver env needs the variable to set, a letter or '_' then letters, digits or '_'", c.Variable)
			case vars[c.Variable]:
				ps.add(ci+".variable", "%s is set by two credentials", c.Variable)
			}
			vars[c.Variable] = true
		default:
			ps.add(ci+".deliver", "%q is not one of file, aws, env", c.Deliver)
		}
		if c.Variable != "" && c.Deliver != DeliverEnv {
			ps.add(ci+".variable", "only deliver env sets a variable")
		}
		if s := c.Source; s != nil {
			n := 0
			for _, set := range []bool{len(s.Command) > 0, s.File != "", s.Env != "", s.Helper != ""} {
				if set {
					n++
				}
			}
			switch {
			case n != 1:
				ps.add(ci+".source", "want exactly one of command, file, env, helper")
			case s.Helper != "" && !helperNameRE.MatchString(s.Helper):
				ps.add(ci+".source.helper", "%q: want the part after docker-credential- (letters, digits, '.', '_', '-')", s.Helper)
			case (s.Helper != "") != (s.Registry != ""):
				ps.add(ci+".source.registry", "a helper needs the registry it logs in to, and only a helper takes one")
			}
		}
	}
}
