package compose

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

// Discovery is what Discover chose when no -f, COMPOSE_FILE or --config
// named the files: Compose files, or one devcontainer.json.
type Discovery struct {
	Files        []string // the Compose file and its override, if found
	Devcontainer string   // else a devcontainer.json
	// Also names a devcontainer config found beside the chosen Compose
	// file, for the "Using" line (--config selects it).
	Also string
}

// Discover walks up from dir. The nearest directory holding either a
// Compose file or a devcontainer config wins, so a devcontainer in the
// working directory beats a compose.yaml in a parent (what the
// devcontainer CLI would deploy); within one directory a Compose file
// wins, as with docker compose.
func Discover(dir string) (Discovery, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Discovery{}, err
	}
	for d := dir; ; d = filepath.Dir(d) {
		dcs, err := devcontainerIn(d)
		if err != nil {
			return Discovery{}, err
		}
		if f := firstExisting(d, cli.DefaultFileNames); f != "" {
			found := Discovery{Files: []string{f}}
			if ov := firstExisting(d, cli.DefaultOverrideFileNames); ov != "" {
				found.Files = append(found.Files, ov)
			}
			if len(dcs) > 0 {
				found.Also = dcs[0]
			}
			return found, nil
		}
		if len(dcs) > 0 {
			return Discovery{Devcontainer: dcs[0]}, nil
		}
		if filepath.Dir(d) == d {
			return Discovery{}, fmt.Errorf("no Compose file (compose.yaml, docker-compose.yml, ...) or devcontainer.json found in %s or its parents: create one or pass -f FILE", dir)
		}
	}
}

// devcontainerIn returns the devcontainer config of dir in the devcontainer
// CLI's order: .devcontainer/devcontainer.json, .devcontainer.json, then
// .devcontainer/<folder>/devcontainer.json — where several folders hold
// one, the choice is the user's (an error lists them).
func devcontainerIn(dir string) ([]string, error) {
	for _, rel := range []string{".devcontainer/devcontainer.json", ".devcontainer.json"} {
		if f := filepath.Join(dir, rel); isRegular(f) {
			return []string{f}, nil
		}
	}
	sub, _ := filepath.Glob(filepath.Join(dir, ".devcontainer", "*", "devcontainer.json"))
	var found []string
	for _, f := range sub {
		if isRegular(f) {
			found = append(found, f)
		}
	}
	if len(found) > 1 {
		rel := make([]string, len(found))
		for i, f := range found {
			rel[i], _ = filepath.Rel(dir, f)
		}
		return nil, fmt.Errorf("%s holds %d devcontainer configs (%s): choose one with --config PATH", dir, len(found), strings.Join(rel, ", "))
	}
	return found, nil
}

// IsDevcontainerFile reports whether a -f path names a devcontainer config
// rather than a Compose file.
func IsDevcontainerFile(path string) bool {
	base := filepath.Base(path)
	return base == "devcontainer.json" || base == ".devcontainer.json"
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
