package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// assertHostClean checks what a backend may leave on the host besides
// containers, networks and volumes after a down -v: nothing naming the
// containers (short or full IDs) — no mount (rootfs, netns), iptables
// rule (portmap), process (monitor, shim) or file in the data dir. Only
// what names them counts: other packages' tests run at the same time.
func assertHostClean(t *testing.T, ids []string) {
	t.Helper()
	short := make([]string, 0, len(ids))
	for _, id := range ids {
		if len(id) >= 12 {
			short = append(short, id[:12])
		}
	}
	mentions := func(s string) string {
		for _, id := range short {
			if strings.Contains(s, id) {
				return id
			}
		}
		return ""
	}
	for _, l := range mountLines(t) {
		if id := mentions(l); id != "" {
			t.Errorf("mount of container %s left: %s", id, l)
		}
	}
	if out, err := exec.Command("iptables-save").Output(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if id := mentions(l); id != "" {
				t.Errorf("iptables rule of container %s left: %s", id, l)
			}
		}
	}
	// A process that ends on its own shortly is no leak: podman's conmon
	// of an exec session waits exit_command_delay (10 s with
	// scripts/podman.sh) after the exec ended, container removed or not.
	leftProcs := func() (left []string) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, _ := os.ReadFile(p)
			if id := mentions(strings.ReplaceAll(string(b), "\x00", " ")); id != "" {
				left = append(left, fmt.Sprintf("process of container %s left: %s: %s", id, filepath.Dir(p), strings.ReplaceAll(string(b), "\x00", " ")))
			}
		}
		return left
	}
	left := leftProcs()
	for deadline := time.Now().Add(15 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = leftProcs() {
		time.Sleep(250 * time.Millisecond)
	}
	for _, l := range left {
		t.Error(l)
	}
	if data := os.Getenv("CORNUS_DATA_DIR"); data != "" {
		err := filepath.WalkDir(data, func(p string, _ os.DirEntry, err error) error {
			if err == nil {
				if id := mentions(filepath.Base(p)); id != "" {
					t.Errorf("state of container %s left: %s", id, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}
}

func mountLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
