package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/containerd/containerd/v2/client"
)

// bareRows times up -d, ps and down of the 10-service project with cornus
// on the bare backend (runc, no daemon) against cornus on containerd,
// alternating in the same run, beside docker compose on dockerd (the
// medians measured above, none with -only bare). After each up the
// runtime must run all ten containers; ps loads the Compose file. The
// bench image must be loaded into both stores (make bench does).
func (b bench) bareRows(runs int, upD, downD []time.Duration) {
	envOf := func(backend, data string) []string {
		env := []string{"CORNUS_DEPLOY_BACKEND=" + backend, "CORNUS_CONTAINERD_ADDRESS=" + containerdAddress}
		if data != "" { // bare keeps its images in its data dir: the default one, where make bench loaded it
			env = append(env, "CORNUS_DATA_DIR="+filepath.Join(b.dir, data))
		}
		return env
	}
	bareEnv, cdEnv := envOf("bare", ""), envOf("containerd", "containerd-data")
	on := func(env []string, project string) func(verb ...string) time.Duration {
		return func(verb ...string) time.Duration {
			start := time.Now()
			b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", project}, verb...)...)
			return time.Since(start)
		}
	}
	bare, cd := on(bareEnv, "bench-bare"), on(cdEnv, "bench-cd")
	cli, err := client.New(containerdAddress, client.WithDefaultNamespace("cornus"))
	if err != nil {
		fail(fmt.Errorf("containerd at %s: %w", containerdAddress, err))
	}
	defer cli.Close()
	defer b.bestEffort(cdEnv, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-cd", "down", "-t", "1")
	defer b.bestEffort(bareEnv, b.cornus, "compose", "-f", "ten.yaml", "-p", "bench-bare", "down", "-t", "1")
	bare("up", "-d") // warm both once: image unpack, networks
	bare("down", "-t", "1")
	cd("up", "-d")
	cd("down", "-t", "1")
	var upB, psB, downB, upC, psC, downC []time.Duration
	for range runs {
		upB = append(upB, bare("up", "-d"))
		expectRunning("cornus up -d on bare", b.runningOnBare(bareEnv, "bench-bare"), 10)
		t, _ := b.psLoaded(bareEnv, b.cornus, "compose", "ten.yaml", "bench-bare")
		psB = append(psB, t)
		downB = append(downB, bare("down", "-t", "1"))
		upC = append(upC, cd("up", "-d"))
		expectRunning("cornus up -d on containerd", runningOnContainerd(cli, composeFilter("bench-cd")), 10)
		t, _ = b.psLoaded(cdEnv, b.cornus, "compose", "ten.yaml", "bench-cd")
		psC = append(psC, t)
		downC = append(downC, cd("down", "-t", "1"))
	}
	peers := "cornus on containerd"
	if len(upD) > 0 {
		peers += " and docker compose on dockerd (same run)"
	}
	fmt.Printf("cornus on bare (runc, no daemon) vs %s, %d runs each, medians [min–max]:\n\n", peers, runs)
	for _, r := range []struct {
		name          string
		bare, cd, dkr []time.Duration
	}{
		{"up -d (10 services)", upB, upC, upD},
		{"down (10 services)", downB, downC, downD},
		{"ps (10 services)", psB, psC, nil},
	} {
		mb, mc := median(r.bare), median(r.cd)
		fmt.Printf("  %-22s bare %8.1f ms %s   containerd %8.1f ms %s   bare/containerd %.2fx", r.name, ms(mb), spread(r.bare), ms(mc), spread(r.cd), float64(mb)/float64(mc))
		if len(r.dkr) > 0 {
			md := median(r.dkr)
			fmt.Printf("   docker compose %8.1f ms   bare/compose %.2fx", ms(md), float64(mb)/float64(md))
		}
		fmt.Println()
	}
}
