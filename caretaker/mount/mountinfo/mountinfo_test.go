package mountinfo

import (
	"strings"
	"testing"
)

// The fields after the separator are found past any optional fields, and
// escaped mountpoints come back as the kernel was given them.
func TestParse(t *testing.T) {
	table := `22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw
90 22 0:55 / /run/a\040b rw,nosuid shared:1 master:2 - fuse.cornus cornus rw,user_id=0
91 22 0:56 / /run/c rw - 9p cornus rw,trans=fd
broken line
`
	got, err := parse(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Point: "/proc", FSType: "proc", Source: "proc", Minor: 21},
		{Point: "/run/a b", FSType: "fuse.cornus", Source: "cornus", Minor: 55},
		{Point: "/run/c", FSType: "9p", Source: "cornus", Minor: 56},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
