// Command bench compares cornus with docker compose on the same daemon in
// the same run and prints median ratios (cornus / compose):
//
//	up -d and down of a 10-service project (services exit on SIGTERM),
//	ps of a project with 100 containers.
//
// Runs alternate between the two tools so drift on the machine affects both.
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
	"sort"
	"strings"
	"time"
)

func main() {
	cornus := flag.String("cornus", "bin/cornus", "cornus binary")
	compose := flag.String("compose", "", "docker compose binary (standalone)")
	runs := flag.Int("runs", 7, "runs per measurement (median reported)")
	image := flag.String("image", "cornus-bench/busybox:1", "image the services run (must be loaded)")
	only := flag.String("only", "all", "what to measure: all, compose or proxy")
	flag.Parse()
	if *compose == "" {
		fail(fmt.Errorf("-compose is required"))
	}
	for _, bin := range []*string{cornus, compose} {
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

	if *only == "all" || *only == "proxy" {
		fmt.Printf("Docker API proxy vs dockerd, 300 requests each, medians:\n\n")
		proxyLatency(dir, *image, 300)
		fmt.Println()
		if *only == "proxy" {
			return
		}
	}
	b := bench{cornus: *cornus, compose: *compose, dir: dir}
	fmt.Printf("cornus vs docker compose (%s), %d runs each, medians:\n\n", strings.TrimSpace(b.out(*compose, "version", "--short")), *runs)
	if err := b.write("ten.yaml", services(*image, 10, 1)); err != nil {
		fail(err)
	}
	upC, downC, upD, downD := b.upDown(*runs)
	row("up -d (10 services)", upC, upD, 0.7)
	row("down (10 services)", downC, downD, 0.5)

	if err := b.write("hundred.yaml", services(*image, 10, 10)); err != nil {
		fail(err)
	}
	psC, psD := b.ps(*runs * 3)
	row("ps (100 containers)", psC, psD, 0.5)
}

type bench struct{ cornus, compose, dir string }

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

// upDown times up -d and down for both tools, alternating which goes first.
func (b bench) upDown(runs int) (upC, downC, upD, downD []time.Duration) {
	cornusArgs := func(verb ...string) []string {
		return append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-cornus"}, verb...)
	}
	composeArgs := func(verb ...string) []string {
		return append([]string{"--progress", "quiet", "-f", "ten.yaml", "-p", "bench-compose"}, verb...)
	}
	// Warm both (page cache, image, network code paths), then clean.
	b.must(b.cornus, cornusArgs("up", "-d")...)
	b.must(b.cornus, cornusArgs("down")...)
	b.must(b.compose, composeArgs("up", "-d")...)
	b.must(b.compose, composeArgs("down")...)
	for i := range runs {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, isCornus := range order {
			bin, args := b.compose, composeArgs
			if isCornus {
				bin, args = b.cornus, cornusArgs
			}
			up := b.time(bin, args("up", "-d")...)
			down := b.time(bin, args("down")...)
			if isCornus {
				upC, downC = append(upC, up), append(downC, down)
			} else {
				upD, downD = append(upD, up), append(downD, down)
			}
		}
	}
	return
}

// ps times `ps` on 100 running containers (created once, by cornus, with
// labels both tools read).
func (b bench) ps(runs int) (psC, psD []time.Duration) {
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "hundred.yaml", "-p", "bench-ps", "up", "-d")
	defer b.must(b.cornus, "compose", "--progress", "quiet", "-f", "hundred.yaml", "-p", "bench-ps", "down", "-t", "1")
	if n := strings.Count(b.out(b.cornus, "compose", "-f", "hundred.yaml", "-p", "bench-ps", "ps", "-q"), "\n"); n != 100 {
		fail(fmt.Errorf("cornus ps sees %d containers, want 100", n))
	}
	if n := strings.Count(b.out(b.compose, "-f", "hundred.yaml", "-p", "bench-ps", "ps", "-q"), "\n"); n != 100 {
		fail(fmt.Errorf("docker compose ps sees %d containers, want 100", n))
	}
	for range runs {
		psC = append(psC, b.time(b.cornus, "compose", "-f", "hundred.yaml", "-p", "bench-ps", "ps"))
		psD = append(psD, b.time(b.compose, "-f", "hundred.yaml", "-p", "bench-ps", "ps"))
	}
	return
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
	verdict := "meets"
	if ratio > target {
		verdict = "MISSES"
	}
	fmt.Printf("  %-22s cornus %8.1f ms   compose %8.1f ms   ratio %.2fx (target <= %.1fx: %s)\n",
		name, ms(mc), ms(md), ratio, target, verdict)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func decode(resp *http.Response, v any) {
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		fail(err)
	}
}
