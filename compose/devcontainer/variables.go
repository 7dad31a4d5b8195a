package devcontainer

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// variables expands devcontainer.json's ${...} variables.
type variables struct {
	local, containerWorkspace, id string
	env                           map[string]string
}

func newVariables(configPath, ws string, env map[string]string) *variables {
	sum := sha256.Sum256([]byte(ws + "\x00" + configPath))
	return &variables{local: ws, env: env, id: hex.EncodeToString(sum[:])[:16]}
}

func (v *variables) setContainerWorkspace(cwf string, composeFlavour bool) {
	switch {
	case cwf != "":
		v.containerWorkspace = cwf
	case composeFlavour:
		v.containerWorkspace = "/"
	default:
		v.containerWorkspace = "/workspaces/" + filepath.Base(v.local)
	}
}

func (v *variables) expand(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+j]
		val, ok := v.lookup(name)
		if !ok {
			val = s[i : i+j+1] // leave unknown and container-side variables as written
		}
		b.WriteString(val)
		s = s[i+j+1:]
	}
}

func (v *variables) lookup(name string) (string, bool) {
	switch name {
	case "localWorkspaceFolder":
		return v.local, true
	case "localWorkspaceFolderBasename":
		return filepath.Base(v.local), true
	case "containerWorkspaceFolder":
		return v.containerWorkspace, v.containerWorkspace != ""
	case "containerWorkspaceFolderBasename":
		return filepath.Base(v.containerWorkspace), v.containerWorkspace != ""
	case "devcontainerId":
		return v.id, true
	}
	for _, prefix := range []string{"localEnv:", "env:"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			key, def, _ := strings.Cut(rest, ":")
			if val, ok := v.env[key]; ok {
				return val, true
			}
			return def, true
		}
	}
	return "", false
}

func (v *variables) expandAll(x any) any {
	switch t := x.(type) {
	case string:
		return v.expand(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = v.expandAll(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = v.expandAll(e)
		}
		return out
	}
	return x
}

// escapeDollars protects already-expanded devcontainer values from Compose
// interpolation, which would otherwise read "$HOME" or "$!" as variables.
func escapeDollars(x any) any {
	switch t := x.(type) {
	case string:
		return strings.ReplaceAll(t, "$", "$$")
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = escapeDollars(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = escapeDollars(e)
		}
		return out
	}
	return x
}
