package compose

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectNameMatchesLoad: the fast project-name path agrees with a full
// load on every Compose corpus case (flags and env as the case gives them).
func TestProjectNameMatchesLoad(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "compose", "*"))
	if len(dirs) == 0 {
		t.Fatal("no corpus")
	}
	for _, d := range dirs {
		abs, _ := filepath.Abs(d)
		o := Options{WorkingDir: abs}
		if b, err := os.ReadFile(filepath.Join(abs, "env")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					o.Environ = append(o.Environ, l)
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(abs, "args")); err == nil {
			args := strings.Fields(string(b))
			for i := 0; i+1 < len(args); i++ {
				switch args[i] {
				case "-f", "--file":
					o.Files = append(o.Files, args[i+1])
				case "-p", "--project-name":
					o.ProjectName = args[i+1]
				case "--env-file":
					o.EnvFiles = append(o.EnvFiles, args[i+1])
				case "--project-directory":
					o.ProjectDir = args[i+1]
				case "--profile":
					o.Profiles = append(o.Profiles, args[i+1])
				}
			}
		}
		t.Run(filepath.Base(d), func(t *testing.T) {
			lr, err := Load(context.Background(), o)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			fast, err := ProjectName(o)
			if errors.Is(err, ErrNeedsLoad) {
				t.Skip("needs a full load")
			}
			if err != nil || fast != lr.Project.Name {
				t.Fatalf("ProjectName = %q, %v; Load says %q", fast, err, lr.Project.Name)
			}
		})
	}
}
