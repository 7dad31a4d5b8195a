package caretaker

import (
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// Issue 12: the mounts label a companion acts on is bounded and checked
// (index range, absolute targets, one-component file names), and what the
// server encodes reads back the same.
func TestAppMounts(t *testing.T) {
	ok := []AppMount{{Index: 0, Target: "/work"}, {Index: 3, Target: "/etc/one.conf", File: "one.conf", ReadOnly: true}}
	got, err := AppMounts(spec.App{Name: "app", Labels: map[string]string{LabelLocalMounts: EncodeAppMounts(ok)}})
	if err != nil || len(got) != 2 || got[1] != ok[1] {
		t.Fatalf("round trip: %v %v", got, err)
	}
	if ms, err := AppMounts(spec.App{Name: "app"}); ms != nil || err != nil {
		t.Errorf("no label: %v %v", ms, err)
	}
	for name, bad := range map[string]string{
		"index":    `[{"index":64,"target":"/w"}]`,
		"negative": `[{"index":-1,"target":"/w"}]`,
		"relative": `[{"index":0,"target":"w"}]`,
		"root":     `[{"index":0,"target":"/"}]`,
		"file":     `[{"index":0,"target":"/w","file":"../x"}]`,
		"two ways": `[{"index":0,"target":"/w"},{"index":0,"target":"/x","file":"x"}]`,
		"json":     `{`,
		"size":     strings.Repeat(" ", maxMountsLabel+1),
	} {
		if _, err := AppMounts(spec.App{Name: "app", Labels: map[string]string{LabelLocalMounts: bad}}); err == nil || !strings.Contains(err.Error(), "services.app.labels."+LabelLocalMounts) {
			t.Errorf("%s: %v, want a refusal naming the label", name, err)
		}
	}
}

// Issue 12: the mount, portforward and agent roles need the server to
// dial back to; mount indices are bounded and unique.
func TestParseRoles(t *testing.T) {
	base := `"project":"p","service":"s"`
	for name, raw := range map[string]string{
		"no server":    `{` + base + `,"mounts":[{"index":0}]}`,
		"remote":       `{` + base + `,"remote":true}`,
		"repeated":     `{` + base + `,"server":"http://x","mounts":[{"index":1},{"index":1}]}`,
		"out of range": `{` + base + `,"server":"http://x","mounts":[{"index":64}]}`,
		"file":         `{` + base + `,"server":"http://x","mounts":[{"index":0,"file":"a/b"}]}`,
	} {
		if _, err := Parse(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := Parse(`{` + base + `,"server":"http://x","remote":true,"mounts":[{"index":0,"readOnly":true}]}`)
	if err != nil || !c.Remote || len(c.Mounts) != 1 || !c.Mounts[0].ReadOnly || c.Mounts[0].File != "" {
		t.Errorf("valid config: %+v %v", c, err)
	}
	c, err = Parse(`{` + base + `,"server":"http://x","mounts":[{"index":2,"file":"one.conf"}]}`)
	if err != nil || len(c.Mounts) != 1 || c.Mounts[0].File != "one.conf" {
		t.Errorf("a single file's config: %+v %v", c, err)
	}
}

// Issue 12: an agent socket's id is a bounded name (it becomes a path).
func TestValidAgentID(t *testing.T) {
	for id, want := range map[string]bool{"abc123": true, "": false, "../x": false, "a.sock": false, strings.Repeat("a", 65): false, strings.Repeat("a", 64): true} {
		if ValidAgentID(id) != want {
			t.Errorf("ValidAgentID(%q) = %v", id, !want)
		}
	}
}
