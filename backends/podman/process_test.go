package podman

import (
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// Locks down ps output split into columns when podman answers whole lines.
func TestSplitColumns(t *testing.T) {
	p := splitColumns(backends.Processes{Titles: []string{"PID   USER     COMMAND"}, Processes: [][]string{{"1 root     sleep 100"}, {"7 root  sh -c echo  a"}}})
	if !slices.Equal(p.Titles, []string{"PID", "USER", "COMMAND"}) || !slices.Equal(p.Processes[0], []string{"1", "root", "sleep 100"}) ||
		!slices.Equal(p.Processes[1], []string{"7", "root", "sh -c echo  a"}) {
		t.Fatalf("%+v", p)
	}
	table := backends.Processes{Titles: []string{"PID", "COMMAND"}, Processes: [][]string{{"1", "sleep"}}}
	if got := splitColumns(table); !slices.Equal(got.Titles, table.Titles) {
		t.Fatalf("a table is kept: %+v", got)
	}
}
