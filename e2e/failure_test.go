package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestComposeStartFailureRemovesContainer (hardening issue, half-created
// containers): a container whose host port is held by a listener of this
// test fails to start (or, where ports are checked at create, to be
// created) and is not left behind, and the error says what failed.
func TestComposeStartFailureRemovesContainer(t *testing.T) {
	b := daemon(t)
	if b.Name() == "kubernetes" {
		// A published port is a host port on the node that the cluster's
		// network plugin maps (portmap DNAT); nothing binds it, so a host
		// listener does not conflict (the scheduler checks pods' host
		// ports against each other). docs/kubernetes.md: Gaps.
		t.Skip("kubernetes: published host ports are mapped by the CNI, not bound, so a host listener cannot make a start fail")
	}
	loadImage(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	p := newProject(t, fmt.Sprintf(`
services:
  web:
    image: cornus-test/busybox:1
    command: ["httpd", "-f", "-p", "8080"]
    ports: ["127.0.0.1:%d:8080"]
`, port))
	_, errOut, code := p.run("compose", "--progress", "plain", "up", "-d")
	if code == 0 {
		t.Fatal("up succeeded with its host port taken")
	}
	// dockerd finds the port taken when it starts the container; a CNI
	// backend checks it when it creates one, before anything is made.
	want := []string{"start " + p.name + "-web-1", "address already in use", "the created container was removed"}
	if strings.Contains(errOut, "create container "+p.name+"-web-1") {
		want = []string{"address already in use", "port is already allocated"}
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if c, _, _ := leftovers(t, b, p.name); c != 0 {
		t.Fatalf("%d containers left after the failed start", c)
	}
}

// TestComposeWaitsForAnotherCornus (hardening issue, project lock): two
// runs on one project with different TMPDIRs are serialized — the second
// waits, says for which process, and then converges.
func TestComposeWaitsForAnotherCornus(t *testing.T) {
	daemon(t)
	loadImage(t)
	// --wait holds the lock until the healthcheck passes, ~2 s after start.
	p := newProject(t, `
services:
  slow:
    image: cornus-test/busybox:1
    init: true
    command: ["sh", "-c", "sleep 2; touch /tmp/ready; exec sleep 600"]
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 300ms
      retries: 100
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := exec.CommandContext(ctx, cornusBin, "compose", "--progress", "plain", "up", "-d", "--wait")
	first.Dir, first.Env = p.dir, append(slices.Clone(p.env), "TMPDIR="+t.TempDir())
	stderr, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Wait() }()
	// Once the first has started the container it holds the lock.
	sc := bufio.NewScanner(stderr)
	var firstOut bytes.Buffer
	for sc.Scan() {
		firstOut.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Started") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	second := exec.CommandContext(ctx, cornusBin, "compose", "--progress", "plain", "up", "-d")
	second.Dir, second.Env = p.dir, append(slices.Clone(p.env), "TMPDIR="+t.TempDir())
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("second up: %v\n%s\nfirst:\n%s", err, out, firstOut.String())
	}
	want := fmt.Sprintf("Waiting another cornus (pid %d) is working on it", first.Process.Pid)
	if !strings.Contains(string(out), want) {
		t.Errorf("second up did not say it waited (%q):\n%s", want, out)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first up: %v\n%s", err, firstOut.String())
	}
	if ps := p.must("compose", "ps"); !strings.Contains(ps, "(healthy)") {
		t.Errorf("not converged:\n%s", ps)
	}
}
