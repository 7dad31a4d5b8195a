package main

import (
	"bytes"
	"flag"
	"github.com/cornus-dev/cornus/compose"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCLI runs the cornus command line in-process with a hermetic
// environment and returns stdout, stderr and the exit status.
func runCLI(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	// A user as on a developer's Linux machine: a devcontainer's remote
	// user gets its IDs (updateRemoteUserUID).
	user := &compose.LocalUser{UID: 1000, GID: 1000}
	code := run(args, streams{In: strings.NewReader(""), Out: &out, Err: &errb, Environ: env, Dir: dir, User: user})
	return out.String(), errb.String(), code
}

// corpusCase is one directory of testdata/{compose,devcontainer,invalid}:
// the input files, an optional `args` file (extra `cornus compose` flags)
// and an optional `env` file (the whole process environment, KEY=VALUE).
type corpusCase struct {
	name, dir string
	args      []string
	env       []string
}

func loadCorpus(t *testing.T, kind string) []corpusCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", kind, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		c := corpusCase{name: filepath.Base(d), dir: abs}
		if b, err := os.ReadFile(filepath.Join(abs, "args")); err == nil {
			c.args = strings.Fields(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(abs, "env")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					c.env = append(c.env, l)
				}
			}
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatalf("no corpus cases under testdata/%s", kind)
	}
	return cases
}

// normalize makes output independent of where the repository is checked out.
func (c corpusCase) normalize(s string) string {
	return strings.ReplaceAll(s, c.dir, "${CASE}")
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if got == "" {
			_ = os.Remove(path)
			return
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test ./cmd/cornus -run Golden -update to accept):\n--- want\n%s\n--- got\n%s", filepath.Base(path), want, got)
	}
}

// TestComposeGolden locks down `cornus compose config` — the normalized spec
// and every warning — for each Compose and devcontainer corpus case (issue #2).
func TestComposeGolden(t *testing.T) {
	for _, kind := range []string{"compose", "devcontainer"} {
		for _, c := range loadCorpus(t, kind) {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				args := append(append([]string{"compose"}, c.args...), "config")
				stdout, stderr, code := runCLI(t, c.dir, c.env, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				checkGolden(t, filepath.Join(c.dir, "golden.yaml"), c.normalize(stdout))
				checkGolden(t, filepath.Join(c.dir, "golden.warnings"), c.normalize(stderr))

				// The printed spec is itself a valid deploy.yaml that loads
				// back to the same project.
				reloaded, err := spec.Load("golden.yaml", c.dir, []byte(stdout))
				if err != nil {
					t.Fatalf("printed spec does not load back: %v", err)
				}
				again, err := reloaded.EncodeYAML()
				if err != nil {
					t.Fatal(err)
				}
				if string(again) != stdout {
					t.Errorf("spec does not round-trip:\n--- printed\n%s\n--- reloaded\n%s", stdout, again)
				}

				// JSON output carries the same project.
				js, _, code := runCLI(t, c.dir, c.env, append(args, "--format", "json")...)
				if code != 0 {
					t.Fatalf("--format json: exit %d", code)
				}
				fromJSON, err := spec.Load("config.json", c.dir, []byte(js))
				if err != nil {
					t.Fatalf("json output does not load: %v", err)
				}
				if !reflect.DeepEqual(withoutValues(fromJSON), withoutValues(reloaded)) {
					t.Errorf("json and yaml output differ")
				}
			})
		}
	}
}

// withoutValues clears the never-serialized secret values so projects
// decoded from text compare equal.
func withoutValues(p spec.Project) spec.Project {
	p = spec.DeepCopy(p)
	for n, a := range p.Services {
		for i := range a.Credentials {
			a.Credentials[i].Source = nil // the client's: never in JSON
		}
		for i := range a.Secrets {
			a.Secrets[i].Value = nil
		}
		for i := range a.Configs {
			a.Configs[i].Value = nil
		}
		p.Services[n] = a
	}
	return p
}

// TestComposeInvalid locks down the exact error for each invalid corpus
// case: non-zero exit, nothing on stdout, the message naming file, field and
// fix (issue #2).
func TestComposeInvalid(t *testing.T) {
	for _, c := range loadCorpus(t, "invalid") {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"compose"}, c.args...), "config")
			stdout, stderr, code := runCLI(t, c.dir, c.env, args...)
			if code == 0 {
				t.Fatalf("expected failure, got exit 0:\n%s", stdout)
			}
			if stdout != "" {
				t.Errorf("stdout not empty on error:\n%s", stdout)
			}
			checkGolden(t, filepath.Join(c.dir, "error.golden"), c.normalize(stderr))
		})
	}
}
