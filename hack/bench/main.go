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

// options are the bench's flags.
type options struct {
	cornus, compose, image, only   string
	runs                           int
	scaleServices, scaleReplicas   int
	containerd, bare, serve, mount bool
	builds                         string // the docker-buildx plugin: the build rows' peer
	incus, incusSock               string
	kubernetes, kubeconfig         string
	podman, podmanSock             string
	registry                       string // distribution's registry: the registry rows' reference
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.cornus, "cornus", "bin/cornus", "cornus binary")
	flag.StringVar(&o.compose, "compose", "", "docker compose binary (standalone)")
	flag.IntVar(&o.runs, "runs", 7, "runs per measurement (median reported)")
	flag.StringVar(&o.image, "image", "cornus-bench/busybox:1", "image the services run (must be loaded)")
	flag.StringVar(&o.only, "only", "all", "what to measure: all, compose (all but the proxy), proxy, ps, verbs (compose run and stats), containerd, bare, incus, serve, podman, kubernetes, incluster (the in-cluster server's rows of kubernetes), mounts, registry (the -registry rows), build (the -builds rows), or scale (the 500-container run of make scale, not part of all)")
	flag.IntVar(&o.scaleServices, "scale-services", 50, "services of the scale project")
	flag.IntVar(&o.scaleReplicas, "scale-replicas", 10, "replicas of each service of the scale project")
	flag.BoolVar(&o.containerd, "containerd", false, "also time cornus on the private containerd (scripts/containerd.sh) against the containerd floor (raw parallel containerd and CNI calls)")
	flag.BoolVar(&o.bare, "bare", false, "also time cornus on the bare backend (runc, no daemon) against cornus on containerd and docker compose")
	flag.BoolVar(&o.serve, "serve", false, "also time cornus serve: deploy round trip and port-forward throughput")
	flag.StringVar(&o.incus, "incus", "auto", "also time cornus on the incus backend (up -d --wait, down, a cached image load): auto (when incusd answers on -incus-socket), on or off")
	flag.StringVar(&o.incusSock, "incus-socket", defaultIncusSocket, "the incusd of the incus rows (scripts/incus.sh)")
	flag.StringVar(&o.kubernetes, "kubernetes", "auto", "also time cornus on the kubernetes backend against kubectl apply + rollout status of the same objects: auto (when -kubeconfig answers), on or off")
	flag.StringVar(&o.kubeconfig, "kubeconfig", defaultKubeconfig, "the cluster of the kubernetes rows (scripts/k8s.sh)")
	flag.StringVar(&o.builds, "builds", "", "also time builds: cornus vs docker build with this docker-buildx plugin (scripts/buildx.sh) and docker compose up --build on dockerd, cornus vs podman-compose build on podman, and a remote build's bytes sent")
	flag.BoolVar(&o.mount, "mounts", false, "also compare a client-local mount (cornus 9P export → FUSE) with sshfs: read 100 MB, stat 10k files (scripts/sshfs.sh)")
	flag.StringVar(&o.podman, "podman", "auto", "also time cornus on the podman backend against podman-compose on the same service: auto (when it answers on -podman-socket), on or off")
	flag.StringVar(&o.podmanSock, "podman-socket", defaultPodmanSocket, "the podman service of the podman rows (scripts/podman.sh)")
	flag.StringVar(&o.registry, "registry", "", "also time cornus serve's registry against this distribution registry binary (scripts/distribution.sh): push and pull of 200 MB, 20 concurrent pulls, memory while a 1 GB layer streams")
	flag.Parse()
	return o
}

func main() {
	defer exitOnFailure()
	o := parseFlags()
	if o.only == "mounts" {
		mountRows(o.runs)
		return
	}
	if needsCompose := o.only == "all" || o.only == "compose" || o.only == "ps" || o.only == "scale" || o.only == "verbs"; needsCompose && o.compose == "" {
		fail(fmt.Errorf("-compose is required"))
	}
	for _, bin := range []*string{&o.cornus, &o.compose} {
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
	if noDockerdRows(o, dir) {
		return
	}
	host := dockerhost.HostFromEnv(os.Environ())
	if !strings.HasPrefix(host, "unix://") {
		fail(fmt.Errorf("the bench talks to dockerd over a unix socket; DOCKER_HOST is %s", host))
	}
	dockerSock := strings.TrimPrefix(host, "unix://")
	b := bench{cornus: o.cornus, compose: o.compose, dir: dir, docker: dockerSock}
	switch o.only {
	case "serve":
		b.mustWrite("ten.yaml", services(o.image, 10, 1))
		b.serveRows(o.image, o.runs)
		return
	case "scale":
		b.scale(o.image, dockerSock, o.scaleServices, o.scaleReplicas, o.runs)
		return
	case "build":
		b.allBuildRows(o)
		return
	}
	ok := true
	if o.only == "all" || o.only == "proxy" {
		b.mustWrite("churn.yaml", churnProject(o.image, 10))
		fmt.Printf("Docker API proxy (cornus daemon docker) vs dockerd, 300 requests each, medians:\n\n")
		ok = b.proxyLatency(o.image, dockerSock, 300)
		fmt.Println()
		if o.only == "proxy" {
			exitUnless(ok, "the proxy's answers differ from dockerd's")
			return
		}
	}
	b.mustWrite("ten.yaml", services(o.image, 10, 1))
	switch o.only { // rows that need nothing measured before them
	case "containerd":
		b.containerdRows(o.image, o.runs)
	case "bare":
		b.bareRows(o.runs, nil, nil)
	case "incus":
		b.incusRows(o.image, o.incusSock, o.runs, nil, nil)
	case "ps":
		b.psRows(o.image, o.runs)
	case "verbs":
		b.verbRows(o.image, o.runs)
	default:
		b.allRows(o, dockerSock)
		exitUnless(ok, "the proxy's answers differ from dockerd's")
	}
}

// noDockerdRows runs the rows -only selects that need no dockerd,
// reporting whether it did.
func noDockerdRows(o options, dir string) bool {
	b := bench{cornus: o.cornus, dir: dir}
	switch o.only {
	case "registry":
		b.registryRows(o.registry, o.runs)
	case "kubernetes":
		b.mustWrite("ten.yaml", services(o.image, 10, 1))
		b.kubernetesRows(o.kubeconfig, o.runs)
		b.inclusterRows(o.runs)
	case "incluster":
		b.mustWrite("ten.yaml", services(o.image, 10, 1))
		b.inclusterRows(o.runs)
	case "podman":
		b.mustWrite("ten.yaml", services(o.image, 10, 1))
		b.podmanRows(o.image, o.podmanSock, o.runs)
	default:
		return false
	}
	return true
}

// allRows measures up and down against docker compose and the daemon
// floor, then the rows the flags ask for, then ps.
func (b bench) allRows(o options, dockerSock string) {
	direct := unixClient(dockerSock)
	fl := floor{c: direct, api: apiVersion(direct), image: o.image, project: "bench-floor", n: 10}
	fl.clean()
	fmt.Printf("cornus vs docker compose (%s) and the daemon floor, %d runs each, medians [min–max]:\n\n", strings.TrimSpace(b.out(o.compose, "version", "--short")), o.runs)
	t := b.upDown(o.runs, fl)
	floorRow("up -d (10 services)", t.upC, t.upD, t.upF, 0.7)
	floorRow("down (10 services)", t.downC, t.downD, t.downF, 0.5)
	fmt.Println()
	b.timelines(fl, dockerSock)
	fmt.Println()
	rows := []struct {
		want bool
		run  func()
	}{
		{o.containerd, func() { b.containerdRows(o.image, o.runs) }},
		{o.bare, func() { b.bareRows(o.runs, t.upD, t.downD) }},
		{o.mount, func() { mountRows(o.runs) }},
		{o.builds != "", func() { b.allBuildRows(o) }},
		{o.serve, func() { b.serveRows(o.image, o.runs) }},
		{o.registry != "", func() { b.registryRows(o.registry, o.runs) }},
		{o.podman == "on" || o.podman == "auto" && podmanAnswers(o.podmanSock), func() { b.podmanRows(o.image, o.podmanSock, o.runs) }},
		{o.kubernetes == "on" || o.kubernetes == "auto" && kubernetesAnswers(o.kubeconfig), func() {
			b.kubernetesRows(o.kubeconfig, o.runs)
			b.inclusterRows(o.runs)
		}},
		{o.incus == "on" || o.incus == "auto" && incusAnswers(o.incusSock), func() { b.incusRows(o.image, o.incusSock, o.runs, t.upD, t.downD) }},
	}
	for _, r := range rows {
		if r.want {
			r.run()
			fmt.Println()
		}
	}
	b.verbRows(o.image, o.runs)
	b.psRows(o.image, o.runs)
}

// mustWrite writes a Compose file into the scratch directory, or fails.
func (b bench) mustWrite(name, content string) {
	if err := b.write(name, content); err != nil {
		fail(err)
	}
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
