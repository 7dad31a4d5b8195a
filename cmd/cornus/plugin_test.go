package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/cornus-dev/cornus/backends/dockerhost"
	"github.com/cornus-dev/cornus/internal/testimage"
	"github.com/cornus-dev/cornus/plugin"
)

// Locks down that `docker cornus VERB` shorthands cover exactly the
// compose subcommands and compose's global flags (plugin.Rewrite's lists).
func TestPluginShorthandsMatchCompose(t *testing.T) {
	cmd := newComposeCmd(streams{})
	var verbs []string
	for _, c := range cmd.Commands() {
		if c.Name() != "version" { // `docker cornus version` is cornus's own version command
			verbs = append(verbs, c.Name())
		}
	}
	want := plugin.ComposeVerbs()
	slices.Sort(verbs)
	slices.Sort(want)
	if !slices.Equal(verbs, want) {
		t.Errorf("compose subcommands %q, plugin.ComposeVerbs %q", verbs, want)
	}
	var flags []plugin.ComposeFlag
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.NoOptDefVal != "" {
			t.Errorf("compose flag --%s takes no value; plugin.Rewrite assumes every global flag does", f.Name)
		}
		flags = append(flags, plugin.ComposeFlag{Name: f.Name, Shorthand: f.Shorthand})
	})
	cmp := func(a, b plugin.ComposeFlag) int { return strings.Compare(a.Name, b.Name) }
	wantFlags := plugin.ComposeGlobalFlags()
	slices.SortFunc(flags, cmp)
	slices.SortFunc(wantFlags, cmp)
	if !slices.Equal(flags, wantFlags) {
		t.Errorf("compose flags %v, plugin.ComposeGlobalFlags %v", flags, wantFlags)
	}
}

// Locks down plugin mode in-process: the metadata answer, shorthands
// reaching the command tree, and a clear error without the plugin name.
func TestRunPlugin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runPlugin([]string{plugin.MetadataCommand}, streams{Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("metadata: exit %d: %s", code, errb.String())
	}
	var m plugin.Metadata
	if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.SchemaVersion != "0.1.0" || m.Vendor != "cornus" || m.Version == "" {
		t.Errorf("metadata = %+v, %v:\n%s", m, err, out.String())
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte("name: shorty\nservices:\n  web:\n    image: busybox\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	env := []string{"HOME=" + dir, "DOCKER_CONFIG=" + dir}
	if code := runPlugin([]string{"-D", "cornus", "config"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb, Environ: env, Dir: dir}); code != 0 {
		t.Fatalf("docker cornus config: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "name: shorty") || !strings.Contains(errb.String(), `DEBUG docker context "default"`) {
		t.Errorf("docker cornus config:\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}

	errb.Reset()
	if code := runPlugin([]string{"version"}, streams{Out: &out, Err: &errb}); code != 1 || !strings.Contains(errb.String(), "docker cornus COMMAND") {
		t.Errorf("without the plugin name: exit %d: %s", code, errb.String())
	}
}

// dockerCLI runs the machine's docker CLI with a private config dir.
type dockerCLI struct {
	t      *testing.T
	docker string
	env    []string
	dir    string
}

func (d dockerCLI) run(env []string, args ...string) (string, string, int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.docker, args...)
	cmd.Dir, cmd.Env = d.dir, append(slices.Clone(d.env), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

func (d dockerCLI) must(args ...string) string {
	d.t.Helper()
	out, errOut, code := d.run(nil, args...)
	if code != 0 {
		d.t.Fatalf("docker %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// fails runs docker expecting a failure whose stderr names every want.
func (d dockerCLI) fails(env []string, want []string, args ...string) {
	d.t.Helper()
	out, errOut, code := d.run(env, args...)
	if code == 0 {
		d.t.Errorf("docker %s succeeded:\n%s", strings.Join(args, " "), out)
		return
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			d.t.Errorf("docker %s: stderr does not name %q:\n%s", strings.Join(args, " "), w, errOut)
		}
	}
}

// needed fails under CI=true and skips elsewhere.
func needed(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Locks down the contract with the real docker CLI (28.x): the
// plugin installs with `cornus plugin install`, is listed and run by
// docker, and honors -H, --context, DOCKER_CONTEXT and currentContext; with
// a daemon, shorthands, deploy and Ctrl-C through DOCKER_CLI_PLUGIN_SOCKET.
func TestDockerCLIPlugin(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		needed(t, "the docker CLI is not in PATH (scripts/setup.sh installs it): "+err.Error())
	}
	if testing.Short() {
		t.Skip("builds cornus and runs the docker CLI")
	}
	tmp := t.TempDir()
	cornus := filepath.Join(tmp, "bin", "cornus")
	build := exec.Command("go", "build", "-o", cornus, "./cmd/cornus")
	build.Dir = filepath.Join("..", "..") // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cfg := filepath.Join(tmp, "docker-config")
	project := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "CORNUS_DOCKER_SOCK", "CORNUS_DEPLOY_BACKEND":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "DOCKER_CONFIG="+cfg, "CORNUS_DEPLOY_BACKEND=dockerhost")
	d := dockerCLI{t: t, docker: docker, env: env, dir: project}

	// cornus plugin install --dir <cfg>/cli-plugins
	install := exec.Command(cornus, "plugin", "install", "--dir", filepath.Join(cfg, "cli-plugins"))
	install.Env = env
	out, err := install.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "docker cornus version") {
		t.Fatalf("cornus plugin install: %v\n%s", err, out)
	}
	if target, err := os.Readlink(filepath.Join(cfg, "cli-plugins", "docker-cornus")); err != nil || target != cornus {
		t.Fatalf("plugin link = %q, %v; want %q", target, err, cornus)
	}

	short, err := exec.Command(cornus, "version", "--short").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(short))
	if got := d.must("cornus", "version"); !strings.Contains(got, "cornus version "+version) {
		t.Errorf("docker cornus version = %q, want cornus version %s", got, version)
	}
	if help := d.must("--help"); !strings.Contains(help, "cornus") || !strings.Contains(help, plugin.ShortDescription) {
		t.Errorf("docker --help does not list the cornus plugin:\n%s", help)
	}

	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := "plugin" + hex.EncodeToString(suffix)
	compose := filepath.Join(project, "compose.yaml")
	if err := os.WriteFile(compose, []byte(fmt.Sprintf(`name: %s
services:
  web:
    image: cornus-test/busybox:1
    command: [sh, -c, "trap 'exit 0' TERM; echo hello-from-web; while true; do sleep 1; done"]
    stop_grace_period: 2s
`, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := d.must("cornus", "compose", "-f", compose, "config")
	if !strings.Contains(spec, "name: "+name) || !strings.Contains(spec, "image: cornus-test/busybox:1") {
		t.Errorf("docker cornus compose config:\n%s", spec)
	}
	if got := d.must("cornus", "-f", compose, "config"); got != spec {
		t.Errorf("docker cornus -f F config differs from compose config:\n%s", got)
	}

	// Daemon selection reached cornus: each source names its socket.
	d.fails(nil, []string{"/nonexistent.sock"}, "-H", "unix:///nonexistent.sock", "cornus", "compose", "-f", compose, "ps")
	d.fails(nil, []string{`"nope"`, "docker context ls"}, "--context", "nope", "cornus", "compose", "-f", compose, "ps")
	d.must("context", "create", "broken", "--docker", "host=unix:///nonexistent-ctx.sock")
	d.fails(nil, []string{"/nonexistent-ctx.sock"}, "--context", "broken", "cornus", "compose", "-f", compose, "ps")
	d.fails([]string{"DOCKER_CONTEXT=broken"}, []string{"/nonexistent-ctx.sock"}, "cornus", "compose", "-f", compose, "ps")
	d.must("context", "use", "broken")
	d.fails(nil, []string{"/nonexistent-ctx.sock"}, "cornus", "ps")
	d.must("context", "use", "default")

	t.Run("daemon", func(t *testing.T) {
		d.t = t
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		b, err := dockerhost.New(ctx, dockerhost.WithHost("unix:///var/run/docker.sock"))
		cancel()
		if err != nil {
			needed(t, fmt.Sprintf("no Docker daemon at /var/run/docker.sock (start one with scripts/setup.sh): %v", err))
		}
		_ = b.Close()
		t.Cleanup(func() {
			down := exec.Command(cornus, "compose", "-f", compose, "--progress", "quiet", "down", "-v", "-t", "1")
			down.Env = env
			_ = down.Run()
		})

		// The image comes from the local busybox, never a registry. It is
		// the shared test fixture, so it stays loaded.
		tar := filepath.Join(t.TempDir(), "image.tar")
		f, err := os.Create(tar)
		if err != nil {
			t.Fatal(err)
		}
		if err := testimage.BuildBusybox(f, testimage.Options{Ref: "cornus-test/busybox:1"}); err != nil {
			needed(t, err.Error())
		}
		f.Close()
		if got := d.must("cornus", "image", "load", "-i", tar); !strings.Contains(got, "Loaded image: cornus-test/busybox:1") {
			t.Fatalf("docker cornus image load: %s", got)
		}

		container := name + "-web-1"
		d.must("cornus", "-f", compose, "up", "-d")
		if ps := d.must("cornus", "compose", "-f", compose, "ps"); !strings.Contains(ps, container) {
			t.Errorf("docker cornus compose ps does not list %s:\n%s", container, ps)
		}
		d.must("context", "create", "local", "--docker", "host=unix:///var/run/docker.sock")
		if ps := d.must("--context", "local", "cornus", "compose", "-f", compose, "ps"); !strings.Contains(ps, container) {
			t.Errorf("docker --context local cornus compose ps does not list %s:\n%s", container, ps)
		}
		logsStopOnInterrupt(t, d, compose)
		d.must("cornus", "compose", "-f", compose, "down", "-t", "1")
		if ps := d.must("cornus", "ps", "-a"); strings.Contains(ps, container) {
			t.Errorf("after down, docker cornus ps still lists %s:\n%s", container, ps)
		}

		// deploy -f with the native spec compose config printed.
		deploy := filepath.Join(project, "deploy.yaml")
		if err := os.WriteFile(deploy, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		d.must("cornus", "deploy", "-f", deploy)
		if ps := d.must("cornus", "ps"); !strings.Contains(ps, container) {
			t.Errorf("after deploy, docker cornus ps does not list %s:\n%s", container, ps)
		}
		d.must("cornus", "deploy", "-f", deploy, "--delete")
	})
}

// logsStopOnInterrupt runs `docker cornus logs -f` and sends SIGINT to
// the docker CLI only: the plugin must stop because the CLI closes
// DOCKER_CLI_PLUGIN_SOCKET (the signal itself never reaches it).
func logsStopOnInterrupt(t *testing.T, d dockerCLI, compose string) {
	t.Helper()
	cmd := exec.Command(d.docker, "cornus", "-f", compose, "logs", "-f")
	cmd.Dir, cmd.Env = d.dir, d.env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "hello-from-web") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("docker cornus logs -f printed no log line:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		t.Logf("docker cornus logs -f exited after SIGINT: %v", err)
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("docker cornus logs -f kept running after SIGINT to the docker CLI:\n%s", out.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
