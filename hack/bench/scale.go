package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// scale is `make scale` (issue 17): a project of services × replicas
// containers (50 × 10 = 500), measured the ways users meet it, all on the
// same dockerd in the same run:
//
//	docker compose up -d / down, through the proxy vs straight to dockerd;
//	docker ps and docker compose ps, through the proxy vs direct;
//	cornus compose ps vs docker ps (direct);
//	cornus compose up -d / down vs docker compose (direct);
//
// and proves robustness: every up and down succeeds, and after dockerd is
// killed and restarted (containers exit 255), cornus compose down removes
// everything.
func (b bench) scale(image, dockerSock string, svcs, replicas, runs int) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		fail(fmt.Errorf("the scale bench needs the docker CLI: %w", err))
	}
	n := svcs * replicas
	if err := b.write("scale.yaml", services(image, svcs, replicas)); err != nil {
		fail(err)
	}
	proxyClient, stopProxy := b.startProxy("scale", nil)
	_ = proxyClient
	defer stopProxy()
	direct := []string{"DOCKER_HOST=unix://" + dockerSock}
	proxied := []string{"DOCKER_HOST=unix://" + b.dir + "/scale.sock"}
	composeArgs := func(verb ...string) []string {
		return append([]string{"--progress", "quiet", "-f", "scale.yaml", "-p", "scale"}, verb...)
	}
	cornusArgs := func(verb ...string) []string {
		return append([]string{"compose", "--progress", "quiet", "-f", "scale.yaml", "-p", "scale"}, verb...)
	}
	count := func() int {
		return strings.Count(b.outEnv(direct, docker, "ps", "-aq", "--filter", "label=com.docker.compose.project=scale"), "\n")
	}
	running := func() int { // after an up: all of them must run
		return strings.Count(b.outEnv(direct, docker, "ps", "-q", "--filter", "label=com.docker.compose.project=scale", "--filter", "status=running"), "\n")
	}
	timed := func(env []string, bin string, args ...string) time.Duration {
		start := time.Now()
		b.mustEnv(env, bin, args...)
		return time.Since(start)
	}
	fmt.Printf("%d services × %d replicas = %d containers, %d runs of each read, medians [min–max]:\n\n", svcs, replicas, n, runs)

	// docker compose up -d / down, direct then through the proxy.
	upD := timed(direct, b.compose, composeArgs("up", "-d")...)
	b.expect(running(), n, "after docker compose up -d (direct)")
	var psQ, psD, cpsQ, cpsD, cornusPS, dockerPS []time.Duration
	for i := range runs {
		// Alternate which goes first, so drift affects both.
		pair := []func(){
			func() { psD = append(psD, timed(direct, docker, "ps")) },
			func() { psQ = append(psQ, timed(proxied, docker, "ps")) },
			func() { cpsD = append(cpsD, timed(direct, b.compose, composeArgs("ps")...)) },
			func() { cpsQ = append(cpsQ, timed(proxied, b.compose, composeArgs("ps")...)) },
			func() { cornusPS = append(cornusPS, timed(direct, b.cornus, cornusArgs("ps")...)) },
			func() {
				dockerPS = append(dockerPS, timed(direct, docker, "ps", "-a", "--filter", "label=com.docker.compose.project=scale"))
			},
		}
		for k := range pair {
			pair[(i+k)%len(pair)]()
		}
	}
	downD := b.peerDown(direct, docker, composeArgs("down", "-t", "5"))
	b.expect(count(), 0, "after docker compose down (direct)")
	upQ := timed(proxied, b.compose, composeArgs("up", "-d")...)
	b.expect(running(), n, "after docker compose up -d through the proxy")
	downQ := b.peerDown(proxied, docker, composeArgs("down", "-t", "5"))
	b.expect(count(), 0, "after docker compose down through the proxy")

	scaleRow("docker ps, proxy vs direct", psQ, psD, 1.1)
	scaleRow("docker compose ps, proxy vs direct", cpsQ, cpsD, 1.1)
	scaleRow("docker compose up -d, proxy vs direct", []time.Duration{upQ}, []time.Duration{upD}, 1.1)
	scaleRow("docker compose down, proxy vs direct", []time.Duration{downQ}, []time.Duration{downD}, 1.1)
	scaleRow("cornus compose ps vs docker ps -a", cornusPS, dockerPS, 1.0)

	// cornus itself, then a daemon crash under 500 containers.
	upC := timed(direct, b.cornus, cornusArgs("up", "-d")...)
	b.expect(running(), n, "after cornus compose up -d")
	downC := timed(direct, b.cornus, cornusArgs("down", "-t", "5")...)
	b.expect(count(), 0, "after cornus compose down")
	scaleRow("cornus up -d vs docker compose", []time.Duration{upC}, []time.Duration{upD}, 0.7)
	scaleRow("cornus down vs docker compose", []time.Duration{downC}, []time.Duration{downD}, 1.0)

	b.mustEnv(direct, b.cornus, cornusArgs("up", "-d")...)
	start := time.Now()
	restartDockerd()
	fmt.Printf("\n  dockerd killed and restarted in %.1f s; containers: %s\n", time.Since(start).Seconds(), b.states(direct, docker))
	afterCrash := timed(direct, b.cornus, cornusArgs("down", "-t", "5")...)
	b.expect(count(), 0, "after cornus compose down following a daemon restart")
	fmt.Printf("  cornus compose down after the restart: %.1f s, nothing left\n", afterCrash.Seconds())
}

// peerDown times docker compose down. At 500 containers dockerd 20.10 can
// keep stale endpoints on the network, and compose's down then fails: that
// is reported (it is the peer's result), and the leftovers are cleared,
// restarting dockerd if nothing else removes the network.
func (b bench) peerDown(env []string, docker string, args []string) time.Duration {
	start := time.Now()
	cmd := exec.Command(b.compose, args...)
	cmd.Dir, cmd.Env = b.dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err == nil {
		return took
	}
	fmt.Printf("  (docker compose down failed after %.1f s: %s)\n", took.Seconds(), strings.TrimSpace(string(out)))
	for _, net := range strings.Fields(b.outEnv(env, docker, "network", "ls", "-q", "--filter", "label=com.docker.compose.project=scale")) {
		if exec.Command(docker, "network", "rm", net).Run() != nil {
			restartDockerd()
			b.mustEnv(nil, docker, "network", "rm", net)
		}
	}
	return took
}

// expect fails the bench when a count is not what a step must leave.
func (b bench) expect(got, want int, when string) {
	if got != want {
		fail(fmt.Errorf("%s: %d containers of the project, want %d", when, got, want))
	}
}

// states summarizes the project's containers by state and exit code.
func (b bench) states(env []string, docker string) string {
	out := b.outEnv(env, docker, "ps", "-a", "--filter", "label=com.docker.compose.project=scale", "--format", "{{.State}} {{.Status}}")
	byState := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "exited" {
			byState["exited "+f[2]]++
		} else if len(f) > 0 {
			byState[f[0]]++
		}
	}
	return fmt.Sprint(byState)
}

// restartDockerd kills dockerd (SIGKILL: no graceful container stop) and
// starts it again with the repository's script.
func restartDockerd() {
	if out, err := exec.Command("pkill", "-KILL", "-x", "dockerd").CombinedOutput(); err != nil {
		fail(fmt.Errorf("pkill dockerd: %v %s", err, out))
	}
	for range 100 {
		if exec.Command("pgrep", "-x", "dockerd").Run() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd := exec.Command("scripts/dockerd.sh")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("restart dockerd: %w", err))
	}
}

func (b bench) outEnv(env []string, bin string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = b.dir, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Errorf("%s %s: %v", bin, strings.Join(args, " "), err))
	}
	return string(out)
}

func scaleRow(name string, c, d []time.Duration, target float64) {
	mc, md := median(c), median(d)
	ratio := float64(mc) / float64(md)
	fmt.Printf("  %-40s %9.1f ms %s   vs %9.1f ms %s   %.2fx (target <= %.1fx: %s)\n",
		name, ms(mc), spread(c), ms(md), spread(d), ratio, target, verdict(ratio, target))
}
