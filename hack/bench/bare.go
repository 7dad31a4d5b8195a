package main

import (
	"fmt"
	"path/filepath"
	"time"
)

// bareRows times up -d, ps and down of the 10-service project with cornus
// on the bare backend (runc, no daemon) against cornus on containerd,
// alternating in the same run, beside docker compose on dockerd (the
// medians measured above). The bench image must be loaded into both
// stores (make bench does).
func (b bench) bareRows(runs int, upD, downD []time.Duration) {
	on := func(backend, data, project string) func(verb ...string) time.Duration {
		env := []string{"CORNUS_DEPLOY_BACKEND=" + backend, "CORNUS_CONTAINERD_ADDRESS=" + containerdAddress}
		if data != "" { // bare keeps its images in its data dir: the default one, where make bench loaded it
			env = append(env, "CORNUS_DATA_DIR="+filepath.Join(b.dir, data))
		}
		return func(verb ...string) time.Duration {
			start := time.Now()
			b.mustEnv(env, b.cornus, append([]string{"compose", "--progress", "quiet", "-f", "ten.yaml", "-p", project}, verb...)...)
			return time.Since(start)
		}
	}
	bare, cd := on("bare", "", "bench-bare"), on("containerd", "containerd-data", "bench-cd")
	bare("up", "-d") // warm both once: image unpack, networks
	bare("down", "-t", "1")
	cd("up", "-d")
	cd("down", "-t", "1")
	var upB, psB, downB, upC, psC, downC []time.Duration
	for range runs {
		upB = append(upB, bare("up", "-d"))
		psB = append(psB, bare("ps"))
		downB = append(downB, bare("down", "-t", "1"))
		upC = append(upC, cd("up", "-d"))
		psC = append(psC, cd("ps"))
		downC = append(downC, cd("down", "-t", "1"))
	}
	fmt.Printf("cornus on bare (runc, no daemon) vs cornus on containerd and docker compose on dockerd (same run), %d runs each, medians [min–max]:\n\n", runs)
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
		if r.dkr != nil {
			md := median(r.dkr)
			fmt.Printf("   docker compose %8.1f ms   bare/compose %.2fx", ms(md), float64(mb)/float64(md))
		}
		fmt.Println()
	}
}
