package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/containerd/containerd/v2/client"

	"github.com/cornus-dev/cornus/backends/containerd/benchfloor"
)

// containerdAddress is the private containerd scripts/containerd.sh runs.
const containerdAddress = "/run/cornus-containerd/containerd.sock"

// containerdRows times up -d, ps and down of the 10-service project with
// cornus on containerd against the containerd floor on the same
// containerd: the same containers made and removed by raw parallel
// containerd and CNI calls, with no monitors, records, hosts files or
// output capture (benchfloor), and its ps the least a ps can ask (one
// filtered container list, one task list). Runs alternate which goes
// first; after each up, containerd must run all ten containers.
func (b bench) containerdRows(image string, runs int) {
	env := []string{"CORNUS_DEPLOY_BACKEND=containerd", "CORNUS_CONTAINERD_ADDRESS=" + containerdAddress,
		"CORNUS_DATA_DIR=" + filepath.Join(b.dir, "containerd-data")}
	cornus := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-cd"}, verb...)...)
		return time.Since(start)
	}
	cli, err := client.New(containerdAddress, client.WithDefaultNamespace("cornus"))
	if err != nil {
		fail(fmt.Errorf("containerd at %s: %w", containerdAddress, err))
	}
	defer cli.Close()
	fl, err := benchfloor.New(containerdAddress, image, filepath.Join(b.dir, "floor-data"), 10)
	if err != nil {
		fail(err)
	}
	defer fl.Close()
	defer b.bestEffort(env, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-cd", "down", "-t", "1")
	var live []string // the floor's containers up, for a failure to take down
	defer func() {
		if live != nil {
			_ = fl.Down(live)
		}
	}()
	// Warm both (image unpack, network, page cache), then clean.
	cornus("up", "-d")
	cornus("down", "-t", "1")
	ids, err := fl.Up()
	if err == nil {
		err = fl.Down(ids)
	}
	if err != nil {
		fail(err)
	}
	var upC, psC, downC, upF, psF, downF []time.Duration
	tools := []func(){
		func() {
			upC = append(upC, cornus("up", "-d"))
			expectRunning("cornus up -d on containerd", runningOnContainerd(cli, composeFilter("bench-cd")), 10)
			t, _ := b.psLoaded(env, b.cornus, "compose", "ten.yaml", "bench-cd")
			psC = append(psC, t)
			downC = append(downC, cornus("down", "-t", "1"))
		},
		func() {
			start := time.Now()
			ids, err := fl.Up()
			live = ids
			if err != nil {
				fail(err)
			}
			upF = append(upF, time.Since(start))
			start = time.Now()
			states := containerdStates(cli, benchfloor.Filter)
			psF = append(psF, time.Since(start))
			n := 0
			for _, id := range ids { // of this up: a failed run may have left others
				if states[id] == "running" {
					n++
				}
			}
			expectRunning("the containerd floor's up", n, 10)
			start = time.Now()
			if err := fl.Down(ids); err != nil {
				fail(err)
			}
			downF = append(downF, time.Since(start))
			live = nil
		},
	}
	for i := range runs {
		for k := range tools {
			tools[(i+k)%len(tools)]()
		}
	}
	fmt.Printf("cornus on containerd vs the containerd floor (raw parallel containerd and CNI calls on the same containerd), %d runs each, medians [min–max]:\n\n", runs)
	vsFloorRow("up -d (10 services)", upC, upF, 1.1)
	vsFloorRow("down (10 services)", downC, downF, 1.1)
	vsFloorRow("ps (10 services)", psC, psF, 0)
	fmt.Printf("  %-22s (the floor's ps is two calls in the bench's process; cornus's is a process that loads the Compose file)\n", "")
}

// vsFloorRow shows cornus against a floor alone, with a target unless 0.
func vsFloorRow(name string, c, f []time.Duration, target float64) {
	mc, mf := median(c), median(f)
	r := float64(mc) / float64(mf)
	fmt.Printf("  %-22s cornus %8.1f ms %s   floor %8.1f ms %s   cornus/floor %.2fx", name, ms(mc), spread(c), ms(mf), spread(f), r)
	if target > 0 {
		fmt.Printf(" (target <= %.1fx: %s)", target, verdict(r, target))
	}
	fmt.Println()
}
