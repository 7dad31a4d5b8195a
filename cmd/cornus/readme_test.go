package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The Tests section (docs/development.md, moved there from the README)
// states how many golden cases each corpus holds; they must be the
// numbers the golden tests run.
func TestReadmeGoldenCounts(t *testing.T) {
	testsPage := filepath.Join("..", "..", "docs", "development.md")
	b, err := os.ReadFile(testsPage)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`testdata/\\{compose,devcontainer,invalid\\}`\\s+\\((\\d+),\\s+(\\d+)\\s+and\\s+(\\d+)[;)]").FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s no longer states the golden counts as `testdata/{compose,devcontainer,invalid}` (N, N and N): keep them, or drop this test with them", testsPage)
	}
	for i, kind := range []string{"compose", "devcontainer", "invalid"} {
		stated, _ := strconv.Atoi(string(m[i+1]))
		if got := len(loadCorpus(t, kind)); got != stated {
			t.Errorf("%s says testdata/%s holds %d golden cases; it holds %d", testsPage, kind, stated, got)
		}
	}
}

// binaryBudget is the README's limit on the stripped static binary.
const binaryBudget = 60_000_000

// The static binary, built as `make build` builds it (CGO_ENABLED=0,
// -trimpath, -s -w), stays under the README's 60 MB budget. It costs a
// link, so -short skips it.
func TestBinarySizeBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("links the whole binary")
	}
	bin := filepath.Join(t.TempDir(), "cornus")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stripped static binary: %d bytes (%.1f MB, budget %d MB)", fi.Size(), float64(fi.Size())/1e6, binaryBudget/1_000_000)
	if fi.Size() > binaryBudget {
		t.Fatalf("the stripped static binary is %.1f MB, over the README's %d MB budget: find what grew (go tool nm -size -sort size)", float64(fi.Size())/1e6, binaryBudget/1_000_000)
	}
}
