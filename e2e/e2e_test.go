// Package e2e drives the built cornus binary against a real daemon: the
// commands a user types, the output they read, what is left afterwards.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/internal/testbin"
	"github.com/cornus-dev/cornus/internal/testimage"
)

// cornusBin is the binary under test, built once by TestMain.
var cornusBin string

// TestMain builds cornus and gives the run a data dir of its own (the
// daemonless backends keep records, volumes and network state there),
// removed afterwards.
func TestMain(m *testing.M) {
	if os.Getenv("CORNUS_DATA_DIR") == "" {
		dir, err := os.MkdirTemp("", "cornus-e2e-data-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv("CORNUS_DATA_DIR", dir)
		code := testbin.Run(m.Run, "../cmd/cornus", &cornusBin)
		removeDataDir(dir)
		os.Exit(code)
	}
	testbin.Main(m.Run, "../cmd/cornus", &cornusBin)
}

// removeDataDir removes the run's data dir, after the networks a
// daemonless backend keeps there (bridges, firewall rules: host state
// the directory alone does not hold), the implicit default one included.
func removeDataDir(dir string) {
	defer os.RemoveAll(dir)
	switch fromenv.Selected(os.Environ()) {
	case "containerd", "bare":
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := fromenv.Open(ctx, os.Environ())
	if err != nil {
		return
	}
	defer b.Close()
	netw, err := backends.Want[backends.Networks](b, backends.FeatureNetworks, "networks")
	if err != nil {
		return
	}
	ns, _ := netw.ListNetworks(ctx, backends.ListOptions{})
	for _, n := range ns {
		if err := netw.RemoveNetwork(ctx, n.ID); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: remove network %s: %v\n", n.Name, err)
		}
	}
}

// onlyOn skips a test that is about one backend's daemon when another is
// selected.
func onlyOn(t *testing.T, backend, why string) {
	t.Helper()
	if sel := fromenv.Selected(os.Environ()); sel != backend {
		t.Skipf("%s only: %s (this run selects %s)", backend, why, sel)
	}
}

// daemon opens the selected backend, or skips (outside CI) / fails (CI)
// with how to start it.
func daemon(t *testing.T) backends.Backend {
	t.Helper()
	// Generous: opening checks the daemon's state (incus: its network and
	// profile), slow on a loaded 2-core host (CI22: 10 s ran out).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := fromenv.Open(ctx, os.Environ())
	if err != nil {
		msg := fmt.Sprintf("no daemon for %s: %v (start one with scripts/setup.sh)", fromenv.Selected(os.Environ()), err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// project is a scratch copy of a Compose project with a unique name.
type project struct {
	t    *testing.T
	name string
	dir  string
	env  []string
	// prefix runs cornus under a command (ip netns exec NS).
	prefix []string
}

func newProject(t *testing.T, compose string, env ...string) *project {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	p := &project{t: t, name: "e2e" + hex.EncodeToString(suffix), dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(p.dir, "compose.yaml"), []byte(compose), 0o644); err != nil {
		t.Fatal(err)
	}
	p.env = append(os.Environ(), "COMPOSE_PROJECT_NAME="+p.name)
	p.env = append(p.env, env...)
	t.Cleanup(func() {
		// Remove everything, even when the test failed half-way.
		_, _, _ = p.run("compose", "--progress", "quiet", "down", "-v", "-t", "1")
	})
	return p
}

// run executes cornus in the project directory.
func (p *project) run(args ...string) (string, string, int) {
	return p.runIn(nil, args...)
}

func (p *project) runIn(stdin io.Reader, args ...string) (string, string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append(append(append([]string{}, p.prefix...), cornusBin), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = p.dir, p.env, stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("run cornus %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (p *project) must(args ...string) string {
	p.t.Helper()
	out, errOut, code := p.run(args...)
	if code != 0 {
		p.t.Fatalf("cornus %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// leftovers counts the project's containers, networks and volumes.
func leftovers(t *testing.T, b backends.Backend, project string) (int, int, int) {
	t.Helper()
	ctx := context.Background()
	sel := backends.ListOptions{Labels: map[string]string{backends.ComposeProject: project}, All: true}
	cs, err := b.List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	var ns []backends.Network
	if netw, err := backends.Want[backends.Networks](b, backends.FeatureNetworks, "networks"); err == nil {
		if ns, err = netw.ListNetworks(ctx, sel); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := b.ListVolumes(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	return len(cs), len(ns), len(vs)
}

// imageTar writes the busybox test image as a docker-archive.
func imageTar(t *testing.T, ref string) string {
	t.Helper()
	tar := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(tar)
	if err != nil {
		t.Fatal(err)
	}
	if err := testimage.BuildBusybox(f, testimage.Options{Ref: ref}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return tar
}

// loadImage makes the busybox image available through `cornus image load`.
func loadImage(t *testing.T) {
	t.Helper()
	const ref = image
	tar := imageTar(t, ref)
	out, err := exec.Command(cornusBin, "image", "load", "-i", tar).CombinedOutput()
	if err != nil && strings.Contains(string(out), "cannot load images") && hasImage(t, ref) {
		// A backend whose nodes pull images themselves (kubernetes): the
		// image is there already (scripts/k8s.sh imports the test images).
		return
	}
	if err != nil || !strings.Contains(string(out), "Loaded image: "+ref) {
		t.Fatalf("cornus image load: %v\n%s", err, out)
	}
}

// hasImage reports whether the selected backend has the image.
func hasImage(t *testing.T, ref string) bool {
	t.Helper()
	b := daemon(t)
	images, err := backends.Want[backends.Images](b, backends.FeatureImages, "images")
	if err != nil {
		return false
	}
	_, err = images.InspectImage(context.Background(), ref)
	return err == nil
}
