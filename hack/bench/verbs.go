package main

import (
	"fmt"
	"time"
)

// verbRows are issue 26's measures on dockerd, cornus against docker
// compose on the same project and daemon: `run --rm SERVICE true` (target
// <= 1.0x) and `stats --no-stream` of 50 running containers (target
// <= 0.5x).
func (b bench) verbRows(image string, runs int) {
	b.mustWrite("run.yaml", services(image, 1, 1))
	var runC, runD []time.Duration
	for i := range runs {
		pair := []func(){
			func() {
				runC = append(runC, b.time(b.cornus, "compose", "--progress", "quiet", "-f", "run.yaml", "-p", "bench-run-c", "run", "--rm", "-T", "s0", "true"))
			},
			func() {
				runD = append(runD, b.time(b.compose, "--progress", "quiet", "-f", "run.yaml", "-p", "bench-run-d", "run", "--rm", "-T", "s0", "true"))
			},
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "run.yaml", "-p", "bench-run-c", "down", "-t", "1")
	b.must(b.compose, "--progress", "quiet", "-f", "run.yaml", "-p", "bench-run-d", "down", "-t", "1")
	row("run --rm s0 true", runC, runD, 1.0)

	b.mustWrite("fifty.yaml", services(image, 50, 1))
	b.must(b.cornus, "compose", "--progress", "quiet", "-f", "fifty.yaml", "-p", "bench-stats", "up", "-d")
	defer b.must(b.cornus, "compose", "--progress", "quiet", "-f", "fifty.yaml", "-p", "bench-stats", "down", "-t", "1")
	var statsC, statsD []time.Duration
	for i := range runs {
		pair := []func(){
			func() {
				statsC = append(statsC, b.time(b.cornus, "compose", "-f", "fifty.yaml", "-p", "bench-stats", "stats", "--no-stream"))
			},
			func() {
				statsD = append(statsD, b.time(b.compose, "-f", "fifty.yaml", "-p", "bench-stats", "stats", "--no-stream"))
			},
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	row("stats --no-stream (50)", statsC, statsD, 0.5)
	fmt.Println()
}
