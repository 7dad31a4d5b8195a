package devcontainer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cornus-dev/cornus/spec"
)

// config is the part of devcontainer.json cornus reads
// (https://containers.dev/implementors/json_reference/).
type config struct {
	Name              string             `json:"name"`
	Image             string             `json:"image"`
	Build             *build             `json:"build"`
	DockerFile        string             `json:"dockerFile"` // legacy spelling of build.dockerfile
	Context           string             `json:"context"`    // legacy spelling of build.context
	DockerComposeFile stringList         `json:"dockerComposeFile"`
	Service           string             `json:"service"`
	RunServices       []string           `json:"runServices"`
	WorkspaceFolder   string             `json:"workspaceFolder"`
	WorkspaceMount    string             `json:"workspaceMount"`
	Mounts            []json.RawMessage  `json:"mounts"`
	ContainerEnv      map[string]string  `json:"containerEnv"`
	RemoteEnv         map[string]*string `json:"remoteEnv"`
	ContainerUser     string             `json:"containerUser"`
	RemoteUser        string             `json:"remoteUser"`
	ForwardPorts      []json.RawMessage  `json:"forwardPorts"`
	AppPort           json.RawMessage    `json:"appPort"`
	OverrideCommand   *bool              `json:"overrideCommand"`
	RunArgs           []string           `json:"runArgs"`
	Privileged        bool               `json:"privileged"`
	CapAdd            []string           `json:"capAdd"`
	SecurityOpt       []string           `json:"securityOpt"`
	Init              bool               `json:"init"`

	// Local features (./FOLDER), installed in a derived image.
	Features                    json.RawMessage `json:"features"`
	OverrideFeatureInstallOrder []string        `json:"overrideFeatureInstallOrder"`

	// Keys that change how the devcontainer CLI runs the container.
	UpdateRemoteUserUID *bool  `json:"updateRemoteUserUID"`
	ShutdownAction      string `json:"shutdownAction"`
	UserEnvProbe        string `json:"userEnvProbe"`

	InitializeCommand    json.RawMessage `json:"initializeCommand"`
	OnCreateCommand      json.RawMessage `json:"onCreateCommand"`
	UpdateContentCommand json.RawMessage `json:"updateContentCommand"`
	PostCreateCommand    json.RawMessage `json:"postCreateCommand"`
	PostStartCommand     json.RawMessage `json:"postStartCommand"`
	PostAttachCommand    json.RawMessage `json:"postAttachCommand"`
}

type build struct {
	Dockerfile string            `json:"dockerfile"`
	Context    string            `json:"context"`
	Args       map[string]string `json:"args"`
	Target     string            `json:"target"`
	Options    []string          `json:"options"`   // `docker build` flags
	CacheFrom  stringList        `json:"cacheFrom"` // a string or an array
}

// toolKeys are editor settings with no effect on the container
// (so no warning: docs/cli.md lists them) and keys warned about in
// unsupportedKeys. Keys that change behaviour are read into
// config and either honored or warned about by name.
var toolKeys = map[string]bool{
	"$schema": true, "customizations": true, "portsAttributes": true, "otherPortsAttributes": true,
	"waitFor": true, "hostRequirements": true,
}

var unsupportedKeys = map[string]string{
	"hostRequirements":  "host requirements are not checked",
	"initializeCommand": "commands on the host are not run by cornus; run it before deploying",
}

// keyWarnings names the keys of raw that cornus does not support or know.
func keyWarnings(raw map[string]any) []spec.Warning {
	var warns []spec.Warning
	for _, k := range sortedMapKeys(raw) {
		if msg, ok := unsupportedKeys[k]; ok {
			warns = append(warns, spec.Warning{Field: "devcontainer.json " + k, Message: msg})
		} else if !toolKeys[k] && !knownKey(k) {
			warns = append(warns, spec.Warning{Field: "devcontainer.json " + k, Message: "unknown property, ignored"})
		}
	}
	return warns
}

func knownKey(k string) bool { return knownFields[k] }

// stringList accepts a string or an array of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = []string{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return fmt.Errorf("expected a string or an array of strings")
	}
	*l = ss
	return nil
}

// knownFields are the JSON names of config's fields.
var knownFields = func() map[string]bool {
	t := reflect.TypeFor[config]()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[name] = true
	}
	return names
}()

// behaviourWarnings names the devcontainer keys that change behaviour in
// the devcontainer CLI and that cornus cannot honor.
func (dc config) behaviourWarnings() []spec.Warning {
	var out []spec.Warning
	warn := func(key, msg string) {
		out = append(out, spec.Warning{Field: "devcontainer.json " + key, Message: msg})
	}
	switch dc.ShutdownAction {
	case "", "none":
	default:
		warn("shutdownAction", dc.ShutdownAction+": cornus has no editor session to close; containers run until `cornus compose down` (or Ctrl-C on a foreground up)")
	}
	if dc.UserEnvProbe != "" && dc.UserEnvProbe != "none" {
		warn("userEnvProbe", dc.UserEnvProbe+": cornus does not probe the user's shell for environment variables; containerEnv and remoteEnv apply as written")
	}
	return out
}
