package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/docker/go-units"
)

// The build rows (issue 24): the same Dockerfile built by cornus and by
// its peer on the same daemon, in one run.
//
//	dockerd: cornus compose build vs docker build with BuildKit (docker
//	buildx's docker driver, scripts/buildx.sh), cold (--no-cache) and a
//	cached rebuild; up --build of 5 services vs docker compose (bake);
//	podman: cornus compose build vs podman-compose build;
//	a server: cornus compose --server build of a 500 MB context of
//	which the Dockerfile reads 1 MB: the bytes the client sent.

// buildDockerfile copies 1 MB of the context and runs a step, in layers.
func buildDockerfile(image string) string {
	return "FROM " + image + "\nCOPY data/ /data/\nRUN for i in $(seq 1 3000); do echo $i; done > /numbers && wc -c /data/* > /sizes\n" +
		"RUN cat /numbers | wc -l > /count\nCMD [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1 & wait $$!; done\"]\n"
}

// buildContext writes a context: the Dockerfile, 1 MB the build reads in
// four files, and unread bytes (0 for none).
func (b bench) buildContext(name, image string, unread int64) string {
	dir := filepath.Join(b.dir, name)
	must(os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(buildDockerfile(image)), 0o644))
	for i := range 4 {
		blob := make([]byte, 256<<10)
		_, _ = rand.Read(blob)
		must(os.WriteFile(filepath.Join(dir, "data", fmt.Sprintf("part%d", i)), blob, 0o644))
	}
	if unread > 0 {
		f, err := os.Create(filepath.Join(dir, "unread.bin"))
		must(err)
		must(f.Truncate(unread))
		must(f.Close())
	}
	return dir
}

func buildCompose(ctxDir string, n int) string {
	var s strings.Builder
	s.WriteString("services:\n")
	for i := range n {
		fmt.Fprintf(&s, "  b%d:\n    build: %s\n", i, ctxDir)
	}
	return s.String()
}

// buildRows times builds on dockerd against docker buildx and docker
// compose; buildxBin is the docker-buildx plugin.
func (b bench) buildRows(image, buildxBin string, runs int) {
	cfg := filepath.Join(b.dir, "docker-config")
	must(os.MkdirAll(filepath.Join(cfg, "cli-plugins"), 0o755))
	must(os.Symlink(buildxBin, filepath.Join(cfg, "cli-plugins", "docker-buildx")))
	must(os.Symlink(b.compose, filepath.Join(cfg, "cli-plugins", "docker-compose")))
	peerEnv := []string{"DOCKER_CONFIG=" + cfg}
	ctxDir := b.buildContext("bctx", image, 0)
	b.mustWrite("build1.yaml", buildCompose(ctxDir, 1))
	cornus := func(args ...string) time.Duration {
		return b.timeEnv(nil, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "build1.yaml", "-p", "bench-bc", "build"}, args...)...)
	}
	docker := func(args ...string) time.Duration {
		return b.timeEnv(peerEnv, "docker", append(append([]string{"build", "-q", "-t", "bench-bd-b0"}, args...), ctxDir)...)
	}
	defer b.bestEffort(nil, "docker", "rmi", "-f", "bench-bc-b0", "bench-bd-b0")
	cornus()
	docker() // warm: the base, the context's first transfer
	var coldC, coldD, warmC, warmD []time.Duration
	for i := range runs {
		pair := []func(){
			func() { coldC = append(coldC, cornus("--no-cache")); warmC = append(warmC, cornus()) },
			func() { coldD = append(coldD, docker("--no-cache")); warmD = append(warmD, docker()) },
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	fmt.Printf("builds on dockerd: cornus vs docker build (BuildKit, docker buildx %s), %d runs each, medians:\n\n", strings.TrimSpace(b.outEnv(peerEnv, "docker", "buildx", "version")), runs)
	row("build, no cache", coldC, coldD, 1.1)
	row("build, cached", warmC, warmD, 1.1)
	b.upBuildRows(ctxDir, peerEnv, runs)
}

// upBuildRows times up -d --build of 5 services, cornus vs docker compose
// (which builds with bake, buildx being there), down after each.
func (b bench) upBuildRows(ctxDir string, peerEnv []string, runs int) {
	b.mustWrite("build5.yaml", buildCompose(ctxDir, 5))
	cArgs := func(verb ...string) []string {
		return append([]string{"compose", "--progress", "quiet", "-f", "build5.yaml", "-p", "bench-ubc"}, verb...)
	}
	dArgs := func(verb ...string) []string {
		return append([]string{"compose", "--progress", "quiet", "-f", "build5.yaml", "-p", "bench-ubd"}, verb...)
	}
	defer b.bestEffort(nil, b.cornus, cArgs("down", "-t", "1", "--rmi", "local")...)
	defer b.bestEffort(peerEnv, "docker", dArgs("down", "-t", "1", "--rmi", "local")...)
	var upC, upD []time.Duration
	for i := range runs {
		pair := []func(){
			func() {
				upC = append(upC, b.timeEnv(nil, b.cornus, cArgs("up", "-d", "--build")...))
				b.mustEnv(nil, b.cornus, cArgs("down", "-t", "1")...)
			},
			func() {
				upD = append(upD, b.timeEnv(peerEnv, "docker", dArgs("up", "-d", "--build")...))
				b.mustEnv(peerEnv, "docker", dArgs("down", "-t", "1")...)
			},
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	row("up --build (5 services)", upC, upD, 1.0)
}

// remoteBuildRow builds, through a cornus server on loopback (over
// dockerd), a context of 500 MB of which the Dockerfile reads 1 MB, and
// reports what the client sent (its "Build files sent" line).
func (b bench) remoteBuildRow(image string) {
	data := filepath.Join(b.dir, "rb-data")
	tok := strings.TrimSpace(b.out(b.cornus, "token", "create", "--tokens-file", filepath.Join(data, "tokens"), "bench"))
	srv := exec.Command(b.cornus, "serve", "--listen", "127.0.0.1:0", "--tokens-file", filepath.Join(data, "tokens"))
	srv.Env = append(os.Environ(), "CORNUS_DATA_DIR="+data)
	stderr, _ := srv.StderrPipe()
	must(srv.Start())
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	env := []string{"CORNUS_SERVER=" + serverURLFrom(stderr), "CORNUS_TOKEN=" + tok}
	ctxDir := b.buildContext("rctx", image, 500<<20)
	b.mustWrite("remote.yaml", buildCompose(ctxDir, 1))
	defer b.bestEffort(nil, "docker", "rmi", "-f", "bench-rb-b0")
	start := time.Now()
	out := b.combinedEnv(env, b.cornus, "compose", "--progress", "plain", "-f", "remote.yaml", "-p", "bench-rb", "build", "--no-cache")
	took := time.Since(start)
	m := regexp.MustCompile(`Build files sent to \S+: ([0-9.]+\s*[kMG]?B) in (\d+) files`).FindStringSubmatch(out)
	if m == nil {
		fail(fmt.Errorf("no \"Build files sent\" line:\n%s", out))
	}
	sent, _ := units.FromHumanSize(m[1])
	verdict := "met"
	if sent > 2<<20 {
		verdict = "MISSED"
	}
	fmt.Printf("  %-22s sent %s in %s files of a 500 MB context the Dockerfile reads 1 MB of, in %.1f s (target <= 2 MB: %s)\n",
		"remote build", m[1], m[2], took.Seconds(), verdict)
}

// podmanBuildRows times cornus compose build on the podman backend against
// podman-compose build on the same service, cold and cached.
func (b bench) podmanBuildRows(image, sock string, runs int) {
	pc, err := exec.LookPath("podman-compose")
	if err != nil {
		fmt.Printf("podman build rows skipped: podman-compose is not installed (scripts/podman.sh installs it)\n")
		return
	}
	env := []string{"CORNUS_DEPLOY_BACKEND=podman", "CORNUS_PODMAN_SOCKET=unix://" + sock, "CORNUS_DATA_DIR=" + filepath.Join(b.dir, "podman-data")}
	b.podmanImage(image, sock, env)
	peerEnv := []string{"CONTAINER_HOST=unix://" + sock}
	ctxDir := b.buildContext("pctx", image, 0)
	b.mustWrite("pbuild.yaml", buildCompose(ctxDir, 1))
	cornus := func(args ...string) time.Duration {
		return b.timeEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "pbuild.yaml", "-p", "bench-pbc", "build"}, args...)...)
	}
	peer := func(args ...string) time.Duration {
		return b.timeEnv(peerEnv, pc, append([]string{"-f", "pbuild.yaml", "-p", "bench-pbp", "build"}, args...)...)
	}
	cornus()
	peer()
	var coldC, coldP, warmC, warmP []time.Duration
	for i := range runs {
		pair := []func(){
			func() { coldC = append(coldC, cornus("--no-cache")); warmC = append(warmC, cornus()) },
			func() { coldP = append(coldP, peer("--no-cache")); warmP = append(warmP, peer()) },
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	version := "podman-compose"
	for _, l := range strings.Split(b.outEnv(peerEnv, pc, "version"), "\n") {
		if strings.Contains(l, "podman-compose") {
			version = strings.TrimSpace(l)
		}
	}
	fmt.Printf("builds on podman: cornus vs podman-compose build (%s), %d runs each, medians:\n\n", version, runs)
	row("build, no cache", coldC, coldP, 1.0)
	row("build, cached", warmC, warmP, 1.0)
}

func (b bench) timeEnv(env []string, bin string, args ...string) time.Duration {
	start := time.Now()
	b.mustEnv(env, bin, args...)
	return time.Since(start)
}

// combinedEnv runs bin and returns what it printed on both streams.
func (b bench) combinedEnv(env []string, bin string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = b.dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		fail(fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out))
	}
	return strings.TrimSpace(string(out))
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

// allBuildRows are the -builds rows: dockerd's, the remote build's and,
// where a podman service answers, podman's.
func (b bench) allBuildRows(o options) {
	if o.builds == "" {
		fail(fmt.Errorf("-builds is required"))
	}
	b.buildRows(o.image, o.builds, o.runs)
	b.remoteBuildRow(o.image)
	if podmanAnswers(o.podmanSock) {
		fmt.Println()
		b.podmanBuildRows(o.image, o.podmanSock, o.runs)
	}
}
