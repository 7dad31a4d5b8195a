// Command bench compares cornus with docker compose on the same daemon in
// the same run and prints median ratios:
//
//	the Docker API proxy (cornus daemon docker) vs dockerd: read cache
//	warm, bypassed, and under event churn (inspecting the churned
//	containers), every proxied answer checked against dockerd's;
//	up -d and down of a 10-service project (services exit on SIGTERM) vs
//	docker compose and vs the daemon floor (the same Engine API calls,
//	in parallel, straight to dockerd), with a per-container down timeline;
//	ps of a project with 100 containers, the Compose file loaded by both;
//	with -containerd, cornus on containerd vs the containerd floor (raw
//	parallel containerd and CNI calls on the same containerd); with a
//	podman service answering (scripts/podman.sh), up -d, ps and down of
//	the 10-service project on the podman backend vs podman-compose on the
//	same service; and the other backends' rows (flags below).
//
// Runs rotate between the tools so drift on the machine affects all. After
// every timed up, the runtime itself must report the project's containers
// running (running.go): an up that fails fast is no measurement.
//
//	go run ./hack/bench -cornus bin/cornus -compose $(scripts/docker-compose.sh)
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends/dockerhost"
)

func main() {
	defer exitOnFailure()
	cornus := flag.String("cornus", "bin/cornus", "cornus binary")
	compose := flag.String("compose", "", "docker compose binary (standalone)")
	runs := flag.Int("runs", 7, "runs per measurement (median reported)")
	image := flag.String("image", "cornus-bench/busybox:1", "image the services run (must be loaded)")
	only := flag.String("only", "all", "what to measure: all, compose (all but the proxy), proxy, ps, containerd, bare, incus, serve, podman, kubernetes, mounts, or scale (the 500-container run of make scale, not part of all)")
	scaleServices := flag.Int("scale-services", 50, "services of the scale project")
	scaleReplicas := flag.Int("scale-replicas", 10, "replicas of each service of the scale project")
	withContainerd := flag.Bool("containerd", false, "also time cornus on the private containerd (scripts/containerd.sh) against the containerd floor (raw parallel containerd and CNI calls)")
	withBare := flag.Bool("bare", false, "also time cornus on the bare backend (runc, no daemon) against cornus on containerd and docker compose")
	withServe := flag.Bool("serve", false, "also time cornus serve: deploy round trip and port-forward throughput")
	withIncus := flag.String("incus", "auto", "also time cornus on the incus backend (up -d --wait, down, a cached image load): auto (when incusd answers on -incus-socket), on or off")
	incusSock := flag.String("incus-socket", defaultIncusSocket, "the incusd of the incus rows (scripts/incus.sh)")
	withK8s := flag.String("kubernetes", "auto", "also time cornus on the kubernetes backend against kubectl apply + rollout status of the same objects: auto (when -kubeconfig answers), on or off")
	kubeconfig := flag.String("kubeconfig", defaultKubeconfig, "the cluster of the kubernetes rows (scripts/k8s.sh)")
	withMounts := flag.Bool("mounts", false, "also compare a client-local mount (cornus 9P export → FUSE) with sshfs: read 100 MB, stat 10k files (scripts/sshfs.sh)")
	withPodman := flag.String("podman", "auto", "also time cornus on the podman backend against podman-compose on the same service: auto (when it answers on -podman-socket), on or off")
	podmanSock := flag.String("podman-socket", defaultPodmanSocket, "the podman service of the podman rows (scripts/podman.sh)")
	flag.Parse()
	if *only == "mounts" {
		mountRows(*runs)
		return
	}
	if needsCompose := *only == "all" || *only == "compose" || *only == "ps" || *only == "scale"; needsCompose && *compose == "" {
		fail(fmt.Errorf("-compose is required"))
	}
	for _, bin := range []*string{cornus, compose} {
		if *bin == "" {
			continue
		}
		abs, err := filepath.Abs(*bin) // runs happen in a scratch directory
		if err != nil {
			fail(err)
		}
		*bin = abs
	}
	dir, err := os.MkdirTemp("", "cornus-bench-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	podman := *withPodman == "on" || *withPodman == "auto" && podmanAnswers(*podmanSock)
	k8s := *withK8s == "on" || *withK8s == "auto" && kubernetesAnswers(*kubeconfig)
	if *only == "kubernetes" {
		bk := bench{cornus: *cornus, dir: dir}
		if err := bk.write("ten.yaml", services(*image, 10, 1)); err != nil {
			fail(err)
		}
		bk.kubernetesRows(*kubeconfig, *runs)
		return
	}
	if *only == "podman" {
		if err := (bench{cornus: *cornus, dir: dir}).write("ten.yaml", services(*image, 10, 1)); err != nil {
			fail(err)
		}
		(bench{cornus: *cornus, dir: dir}).podmanRows(*image, *podmanSock, *runs)
		return
	}
	host := dockerhost.HostFromEnv(os.Environ())
	if !strings.HasPrefix(host, "unix://") {
		fail(fmt.Errorf("the bench talks to dockerd over a unix socket; DOCKER_HOST is %s", host))
	}
	dockerSock := strings.TrimPrefix(host, "unix://")
	b := bench{cornus: *cornus, compose: *compose, dir: dir, docker: dockerSock}
	if *only == "serve" {
		if err := b.write("ten.yaml", services(*image, 10, 1)); err != nil {
			fail(err)
		}
		b.serveRows(*image, *runs)
		return
	}
	if *only == "scale" {
		b.scale(*image, dockerSock, *scaleServices, *scaleReplicas, *runs)
		return
	}

	ok := true
	if *only == "all" || *only == "proxy" {
		if err := b.write("churn.yaml", churnProject(*image, 10)); err != nil {
			fail(err)
		}
		fmt.Printf("Docker API proxy (cornus daemon docker) vs dockerd, 300 requests each, medians:\n\n")
		ok = b.proxyLatency(*image, dockerSock, 300)
		fmt.Println()
		if *only == "proxy" {
			exitUnless(ok, "the proxy's answers differ from dockerd's")
			return
		}
	}
	if err := b.write("ten.yaml", services(*image, 10, 1)); err != nil {
		fail(err)
	}
	switch *only { // rows that need nothing measured before them
	case "containerd":
		b.containerdRows(*image, *runs)
		return
	case "bare":
		b.bareRows(*runs, nil, nil)
		return
	case "incus":
		b.incusRows(*image, *incusSock, *runs, nil, nil)
		return
	case "ps":
		b.psRows(*image, *runs)
		return
	}
	direct := unixClient(dockerSock)
	fl := floor{c: direct, api: apiVersion(direct), image: *image, project: "bench-floor", n: 10}
	fl.clean()
	fmt.Printf("cornus vs docker compose (%s) and the daemon floor, %d runs each, medians [min–max]:\n\n", strings.TrimSpace(b.out(*compose, "version", "--short")), *runs)
	t := b.upDown(*runs, fl)
	floorRow("up -d (10 services)", t.upC, t.upD, t.upF, 0.7)
	floorRow("down (10 services)", t.downC, t.downD, t.downF, 0.5)
	fmt.Println()
	b.timelines(fl, dockerSock)
	fmt.Println()
	if *withContainerd {
		b.containerdRows(*image, *runs)
		fmt.Println()
	}
	if *withBare {
		b.bareRows(*runs, t.upD, t.downD)
		fmt.Println()
	}
	if *withMounts {
		mountRows(*runs)
		fmt.Println()
	}
	if *withServe {
		b.serveRows(*image, *runs)
		fmt.Println()
	}
	if podman {
		b.podmanRows(*image, *podmanSock, *runs)
		fmt.Println()
	}
	if k8s {
		b.kubernetesRows(*kubeconfig, *runs)
		fmt.Println()
	}
	if *withIncus == "on" || *withIncus == "auto" && incusAnswers(*incusSock) {
		b.incusRows(*image, *incusSock, *runs, t.upD, t.downD)
		fmt.Println()
	}
	b.psRows(*image, *runs)
	exitUnless(ok, "the proxy's answers differ from dockerd's")
}

// psRows times ps of a project of 100 containers, cornus against docker
// compose.
func (b bench) psRows(image string, runs int) {
	if err := b.write("hundred.yaml", services(image, 10, 10)); err != nil {
		fail(err)
	}
	psC, psD, namedC, namedD := b.ps(runs * 3)
	row("ps (100 containers)", psC, psD, 0.5)
	fmt.Printf("  %-22s (Compose file loaded by both; as typed with -f and -p, where cornus reads only the name: cornus %.1f ms, compose %.1f ms, %.2fx)\n",
		"", ms(median(namedC)), ms(median(namedD)), float64(median(namedC))/float64(median(namedD)))
}

// exitUnless ends the bench with status 1 when a check failed, after the
// rows were printed and cleaned up.
func exitUnless(ok bool, why string) {
	if !ok {
		fail(fmt.Errorf("%s", why))
	}
}

type bench struct {
	cornus, compose, dir string
	docker               string // dockerd's socket, for the rows on the default backend
}

// services renders a project of n services with the given replicas each;
// every process exits promptly on SIGTERM.
func services(image string, n, replicas int) string {
	var s strings.Builder
	s.WriteString("services:\n")
	for i := range n {
		fmt.Fprintf(&s, "  s%d:\n    image: %s\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; while true; do sleep 1 & wait $$!; done\"]\n", i, image)
		if replicas > 1 {
			fmt.Fprintf(&s, "    scale: %d\n", replicas)
		}
	}
	return s.String()
}

func (b bench) write(name, content string) error {
	return os.WriteFile(filepath.Join(b.dir, name), []byte(content), 0o644)
}

// upDown times up -d and down for cornus, docker compose and the floor,
// rotating which goes first.
func (b bench) upDown(runs int, fl floor) (t upDownTimes) {
	// Warm all three (page cache, image, network code paths), then clean.
	b.must(b.cornus, b.cornusArgs("up", "-d")...)
	b.must(b.cornus, b.cornusArgs("down")...)
	b.must(b.compose, b.composeArgs("up", "-d")...)
	b.must(b.compose, b.composeArgs("down")...)
	_, _, _ = fl.down(fl.up())
	// A failed check leaves a project up: take both down, and the floor's.
	defer fl.clean()
	defer b.bestEffort(nil, b.compose, b.composeArgs("down", "-t", "1")...)
	defer b.bestEffort(nil, b.cornus, b.cornusArgs("down", "-t", "1")...)
	tools := []func(){
		func() {
			t.upC = append(t.upC, b.time(b.cornus, b.cornusArgs("up", "-d")...))
			expectRunning("cornus up -d", runningOnDockerd(fl.c, fl.api, "bench-cornus"), fl.n)
			t.downC = append(t.downC, b.time(b.cornus, b.cornusArgs("down")...))
		},
		func() {
			t.upD = append(t.upD, b.time(b.compose, b.composeArgs("up", "-d")...))
			expectRunning("docker compose up -d", runningOnDockerd(fl.c, fl.api, "bench-compose"), fl.n)
			t.downD = append(t.downD, b.time(b.compose, b.composeArgs("down")...))
		},
		func() {
			start := time.Now()
			r := fl.up()
			t.upF = append(t.upF, time.Since(start))
			expectRunning("the floor's up", len(dockerdIDs(fl.c, fl.api, "cornus.bench="+fl.project, "running")), fl.n)
			start = time.Now()
			_, _, _ = fl.down(r)
			t.downF = append(t.downF, time.Since(start))
		},
	}
	for i := range runs {
		for k := range tools {
			tools[(i+k)%len(tools)]()
		}
	}
	return t
}

type upDownTimes struct{ upC, downC, upD, downD, upF, downF []time.Duration }

func (b bench) cornusArgs(verb ...string) []string {
	return append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-cornus"}, verb...)
}

func (b bench) composeArgs(verb ...string) []string {
	return append([]string{"--progress", "quiet", "-f", "ten.yaml", "-p", "bench-compose"}, verb...)
}

// ps times `ps` on 100 running containers (created once, by cornus, with
// labels both tools read), both with the Compose file loaded (psLoaded),
// and as typed with -f and -p, where cornus reads only the project name.
func (b bench) ps(runs int) (psC, psD, namedC, namedD []time.Duration) {
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "hundred.yaml", "-p", "bench-ps", "up", "-d")
	defer b.must(b.cornus, "compose", "--progress", "quiet", "-f", "hundred.yaml", "-p", "bench-ps", "down", "-t", "1")
	for _, tool := range []struct{ bin, compose string }{{b.cornus, "compose"}, {b.compose, ""}} {
		if _, out := b.psLoaded(nil, tool.bin, tool.compose, "hundred.yaml", "bench-ps", "-q"); strings.Count(out, "\n") != 100 {
			fail(fmt.Errorf("%s ps sees %d containers, want 100", filepath.Base(tool.bin), strings.Count(out, "\n")))
		}
	}
	for i := range runs {
		pair := []func(){
			func() { t, _ := b.psLoaded(nil, b.cornus, "compose", "hundred.yaml", "bench-ps"); psC = append(psC, t) },
			func() { t, _ := b.psLoaded(nil, b.compose, "", "hundred.yaml", "bench-ps"); psD = append(psD, t) },
			func() {
				namedC = append(namedC, b.time(b.cornus, "compose", "-f", "hundred.yaml", "-p", "bench-ps", "ps"))
			},
			func() { namedD = append(namedD, b.time(b.compose, "-f", "hundred.yaml", "-p", "bench-ps", "ps")) },
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	return
}

// psLoaded times `ps` of project with file loaded, as docker compose ps
// always loads it: the file comes on stdin (-f -) and the name from
// COMPOSE_PROJECT_NAME, since cornus skips the load when -p or the file's
// name: tell the name (compose.ProjectName). sub is "compose" for cornus,
// "" for a standalone docker compose. It returns the output too.
func (b bench) psLoaded(env []string, bin, sub, file, project string, args ...string) (time.Duration, string) {
	f, err := os.Open(filepath.Join(b.dir, file))
	if err != nil {
		fail(err)
	}
	defer f.Close()
	argv := append([]string{"-f", "-", "ps"}, args...)
	if sub != "" {
		argv = append([]string{sub}, argv...)
	}
	cmd := exec.Command(bin, argv...)
	cmd.Dir, cmd.Stdin = b.dir, f
	cmd.Env = append(append(os.Environ(), env...), "COMPOSE_PROJECT_NAME="+project)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		fail(fmt.Errorf("COMPOSE_PROJECT_NAME=%s %s %s < %s: %v\n%s", project, filepath.Base(bin), strings.Join(argv, " "), file, err, errOut.String()))
	}
	return took, out.String()
}

func (b bench) time(bin string, args ...string) time.Duration {
	start := time.Now()
	b.must(bin, args...)
	return time.Since(start)
}

func (b bench) must(bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = b.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out.String()))
	}
}

func (b bench) out(bin string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Dir = b.dir
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("%s %s: %v", filepath.Base(bin), strings.Join(args, " "), err))
	}
	return string(out)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func row(name string, c, d []time.Duration, target float64) {
	mc, md := median(c), median(d)
	ratio := float64(mc) / float64(md)
	fmt.Printf("  %-22s cornus %8.1f ms   compose %8.1f ms   ratio %.2fx (target <= %.1fx: %s)\n",
		name, ms(mc), ms(md), ratio, target, verdict(ratio, target))
}

// floorRow shows cornus against docker compose and against the floor
// (target <= 1.1x), and compose against the floor for scale.
func floorRow(name string, c, d, f []time.Duration, target float64) {
	mc, md, mf := median(c), median(d), median(f)
	rd, rf := float64(mc)/float64(md), float64(mc)/float64(mf)
	fmt.Printf("  %-22s cornus %7.1f ms %s   compose %7.1f ms %s   floor %7.1f ms %s\n", name, ms(mc), spread(c), ms(md), spread(d), ms(mf), spread(f))
	fmt.Printf("  %-22s cornus/compose %.2fx (target <= %.1fx: %s)   cornus/floor %.2fx (target <= 1.1x: %s)   compose/floor %.2fx\n",
		"", rd, target, verdict(rd, target), rf, verdict(rf, 1.1), float64(md)/float64(mf))
}

// spread is the range of the runs, to show how far a median can be trusted.
func spread(ds []time.Duration) string {
	return fmt.Sprintf("[%.0f–%.0f]", ms(slices.Min(ds)), ms(slices.Max(ds)))
}

func verdict(ratio, target float64) string {
	if ratio > target {
		return "MISSES"
	}
	return "meets"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// failure is how fail ends the bench: a panic that main recovers, so
// that the deferred cleanups (projects, containers, proxies, the scratch
// directory) run on the way out, as they do when it ends well.
type failure struct{ err error }

func fail(err error) { panic(failure{err}) }

// exitOnFailure, deferred first in main, prints a failure and exits 1.
func exitOnFailure() {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(failure)
	if !ok {
		panic(r)
	}
	fmt.Fprintln(os.Stderr, "bench:", f.err)
	os.Exit(1)
}

func decode(resp *http.Response, v any) {
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		fail(err)
	}
}
