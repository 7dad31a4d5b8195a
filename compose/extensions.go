package compose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/cornus-dev/cornus/spec"
)

// Extension keys cornus reads. After Load, their values in the project's
// and services' Extensions are typed: *spec.Egress and *DevcontainerInfo.
const (
	EgressExtension       = "x-cornus-egress"
	DevcontainerExtension = "x-cornus-devcontainer"
	// CredentialsExtension is a service's credentials (spec.Credential):
	// typed as Credentials.
	CredentialsExtension = "x-cornus-credentials"
	// DockerExtension asks for a service's docker endpoint
	// (spec.App.Docker): typed as bool.
	DockerExtension = "x-cornus-docker"
)

// Credentials is the typed value of a service's x-cornus-credentials.
type Credentials []spec.Credential

// DevcontainerInfo is what devcontainer.json says about the development
// session of its primary service: session settings and lifecycle commands.
type DevcontainerInfo struct {
	spec.Devcontainer `yaml:",inline"`
	Hooks             *spec.Hooks `yaml:"hooks,omitempty"`
	// BuildStages are added on top of the service's image (its local
	// features, then the UID update); BuildDir is the build context when
	// the service only names an image.
	BuildStages []spec.BuildStage `yaml:"buildStages,omitempty"`
	BuildDir    string            `yaml:"buildDir,omitempty"`
}

// withTypedExtensions validates cornus's extensions and returns a copy of
// the project in which they hold typed values. A service-level
// x-cornus-egress replaces the project-level one entirely (translate applies
// that rule); both are checked here so errors name where they are.
func withTypedExtensions(p *types.Project) (*types.Project, error) {
	file := strings.Join(p.ComposeFiles, ", ")
	ext, err := typedExtensions(p.Extensions, "", file)
	if err != nil {
		return nil, err
	}
	out, err := p.WithServicesTransform(func(name string, s types.ServiceConfig) (types.ServiceConfig, error) {
		e, err := typedExtensions(s.Extensions, "services."+name+".", file)
		if err != nil {
			return s, err
		}
		s.Extensions = e
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	out.Extensions = ext
	return out, nil
}

func typedExtensions(in types.Extensions, at, file string) (types.Extensions, error) {
	if len(in) == 0 {
		return in, nil
	}
	out := make(types.Extensions, len(in))
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		switch v.(type) {
		case *spec.Egress, *DevcontainerInfo, Credentials: // already typed: a reloaded project
			out[k] = v
			continue
		}
		if _, ok := v.(bool); ok && k == DockerExtension && at != "" {
			out[k] = v
			continue
		}
		switch {
		case k == EgressExtension:
			var e spec.Egress
			if err := decodeExtension(v, at+k, file, &e); err != nil {
				return nil, err
			}
			if err := e.Validate(at + k); err != nil {
				return nil, prefixFile(file, err)
			}
			out[k] = &e
		case k == DevcontainerExtension:
			var d DevcontainerInfo
			if err := decodeExtension(v, at+k, file, &d); err != nil {
				return nil, err
			}
			out[k] = &d
		case k == CredentialsExtension && at != "":
			var cs Credentials
			if err := decodeExtension(v, at+k, file, &cs); err != nil {
				return nil, err
			}
			if err := spec.ValidateCredentials(at+k, cs); err != nil {
				return nil, prefixFile(file, err)
			}
			out[k] = cs
		case k == DockerExtension && at != "":
			return nil, fmt.Errorf("%s: %s%s: %v is not a boolean: true gives the service a docker endpoint", file, at, k, v)
		case strings.HasPrefix(k, "x-cornus-"):
			return nil, fmt.Errorf("%s: %s%s: unknown cornus extension (known: %s, %s; %s and %s on a service)", file, at, k, EgressExtension, DevcontainerExtension, CredentialsExtension, DockerExtension)
		default:
			out[k] = v
		}
	}
	return out, nil
}

func decodeExtension(raw any, at, file string, out any) error {
	return prefixFile(file, spec.DecodeStrict(raw, at, out))
}

func prefixFile(file string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Egress returns the typed x-cornus-egress extension, or nil.
func Egress(ext types.Extensions) *spec.Egress {
	e, _ := ext[EgressExtension].(*spec.Egress)
	return e
}

// ServiceCredentials returns a service's typed x-cornus-credentials.
func ServiceCredentials(ext types.Extensions) []spec.Credential {
	cs, _ := ext[CredentialsExtension].(Credentials)
	return cs
}

// ServiceDocker reports whether a service asks for the docker endpoint
// (x-cornus-docker: true).
func ServiceDocker(ext types.Extensions) bool {
	on, _ := ext[DockerExtension].(bool)
	return on
}

// Devcontainer returns the typed x-cornus-devcontainer extension, or nil.
func Devcontainer(ext types.Extensions) *DevcontainerInfo {
	d, _ := ext[DevcontainerExtension].(*DevcontainerInfo)
	return d
}
