package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestComposeStats: `compose stats --no-stream` (issue 26) shows each
// running container's usage: db's memory and processes are not zero;
// locally and through a server. A backend without stats says so.
func TestComposeStats(t *testing.T) {
	b := daemon(t)
	loadImage(t)
	eachWay(t, startServer(t, t.TempDir()), func(t *testing.T, env []string) {
		p := newProject(t, runCompose, env...)
		p.must("compose", "up", "-d", "db")
		if refusedWithout(t, b, backends.FeatureStats, "stats", p, "compose", "stats", "--no-stream") {
			return
		}
		out := p.must("compose", "stats", "--no-stream", "--format", "json")
		var row struct{ Name, MemUsage, PIDs string }
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &row); err != nil {
			t.Fatalf("stats --format json: %v\n%s", err, out)
		}
		if row.Name != p.name+"-db-1" || strings.HasPrefix(row.MemUsage, "0B") || row.PIDs == "0" {
			t.Fatalf("db's stats: %+v", row)
		}
		if table := p.must("compose", "stats", "--no-stream"); !strings.Contains(table, "MEM USAGE / LIMIT") || !strings.Contains(table, p.name+"-db-1") {
			t.Fatalf("stats table:\n%s", table)
		}
	})
}
