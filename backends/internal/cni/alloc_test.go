package cni

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// helperEnv makes the test binary act as a second cornus process.
const helperEnv = "CORNUS_CNI_TEST_ENSURE"

// TestMain lets the test binary, re-run with helperEnv, ensure networks as
// another process would.
func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		dataDir, names, _ := strings.Cut(spec, "|")
		mgr, err := New(dataDir, WithEnv(os.Environ()), WithSubnetBase(testSubnetBase))
		if err == nil {
			for _, n := range strings.Split(names, ",") {
				if _, err = mgr.EnsureNetwork(bg(), NetworkOptions{Name: n}); err != nil {
					break
				}
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Locks down allocation across processes: networks ensured at once by
// three processes and three goroutines on one data dir get distinct
// subnets, all persisted.
func TestRealConcurrentAllocation(t *testing.T) {
	m := realManager(t)
	sfx := suffix(t)
	var names []string
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for p := range 3 {
		batch := []string{fmt.Sprintf("p%d-a%s", p, sfx), fmt.Sprintf("p%d-b%s", p, sfx)}
		names = append(names, batch...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+m.dataDir+"|"+strings.Join(batch, ","))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("helper %v: %v: %s", batch, err, out)
			}
		}()
	}
	for g := range 3 {
		name := fmt.Sprintf("g%d-%s", g, sfx)
		names = append(names, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.EnsureNetwork(bg(), NetworkOptions{Name: name}); err != nil {
				errs <- err
			}
		}()
	}
	t.Cleanup(func() {
		for _, n := range names {
			if err := m.RemoveNetwork(bg(), n); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	nets, err := m.ListNetworks(bg())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, n := range nets {
		if other, dup := seen[n.Subnet.String()]; dup {
			t.Errorf("%s and %s share %s", n.Name, other, n.Subnet)
		}
		seen[n.Subnet.String()] = n.Name
	}
	if len(nets) != len(names) {
		t.Errorf("%d networks persisted, want %d: %+v", len(nets), len(names), nets)
	}
}
