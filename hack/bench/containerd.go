package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/cornus-dev/cornus/backends/containerd/benchfloor"
)

// containerdAddress is the private containerd scripts/containerd.sh runs.
const containerdAddress = "/run/cornus-containerd/containerd.sock"

// containerdRows times up -d, ps and down of the 10-service project with
// cornus on containerd, beside docker compose on dockerd (the medians
// measured above, same run) and the containerd floor: the same containers
// made by raw parallel containerd and CNI calls, with no monitors,
// records, hosts files or output capture.
func (b bench) containerdRows(image string, runs int, upD, downD []time.Duration) {
	env := []string{"CORNUS_DEPLOY_BACKEND=containerd", "CORNUS_CONTAINERD_ADDRESS=" + containerdAddress,
		"CORNUS_DATA_DIR=" + filepath.Join(b.dir, "containerd-data")}
	cornus := func(verb ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", "bench-cd"}, verb...)...)
		return time.Since(start)
	}
	fl, err := benchfloor.New(containerdAddress, image, filepath.Join(b.dir, "floor-data"), 10)
	if err != nil {
		fail(err)
	}
	defer fl.Close()
	cornus("up", "-d")
	cornus("down", "-t", "1")
	ids, err := fl.Up()
	if err == nil {
		err = fl.Down(ids)
	}
	if err != nil {
		fail(err)
	}
	// docker compose's ps of the same project on dockerd, for the ps row.
	b.must(b.compose, b.composeArgs("up", "-d")...)
	var upC, psC, psD, downC, upF, downF []time.Duration
	for range runs {
		upC = append(upC, cornus("up", "-d"))
		psC = append(psC, cornus("ps"))
		psD = append(psD, b.time(b.compose, b.composeArgs("ps")...))
		downC = append(downC, cornus("down", "-t", "1"))
		start := time.Now()
		ids, err := fl.Up()
		if err != nil {
			fail(err)
		}
		upF = append(upF, time.Since(start))
		start = time.Now()
		if err := fl.Down(ids); err != nil {
			fail(err)
		}
		downF = append(downF, time.Since(start))
	}
	fmt.Printf("cornus on containerd vs docker compose on dockerd (same run) and the containerd floor, %d runs each, medians [min–max]:\n\n", runs)
	floorRow("up -d (10 services)", upC, upD, upF, 0.7)
	floorRow("down (10 services)", downC, downD, downF, 0.5)
	row("ps (10 services)", psC, psD, 0.5)
	b.must(b.compose, b.composeArgs("down", "-t", "1")...)
}
