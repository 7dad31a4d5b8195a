package backendtest

import (
	"maps"
	"slices"
	"testing"

	"github.com/cornus-dev/cornus/backends"
)

// TestOneBehaviourCasesHideNothing: a case that is one behaviour (run)
// becomes a warning check when any of its fields is a gap, so at most one
// of them may be gappable (off the floor, or an allowed floor gap); a case
// of several gappable fields splits them into parts (issue "Green on a
// fresh machine", item 3: a gap hides only itself).
func TestOneBehaviourCasesHideNothing(t *testing.T) {
	allowed := map[string]bool{}
	for _, gaps := range AllowedGaps {
		for f := range gaps {
			allowed[f] = true
		}
	}
	for _, c := range cases {
		if len(c.parts) > 0 {
			if c.run != nil || c.sample != nil || len(c.fields) > 0 {
				t.Errorf("case %q has parts and run, sample or fields: the parts say it all", c.name)
			}
			continue
		}
		var gappable []string
		for _, f := range c.fields {
			if !onFloor(f) || allowed[f] {
				gappable = append(gappable, f)
			}
		}
		if len(gappable) > 1 {
			t.Errorf("case %q: a gap on one of %v would hide the others: make each a part", c.name, gappable)
		}
	}
}

// TestPartsPlan: a gap drops its own part (and the parts that need it)
// and nothing else, each gap checked once, a value gap only its value.
func TestPartsPlan(t *testing.T) {
	byName := map[string]testCase{}
	for _, c := range cases {
		byName[c.name] = c
	}
	for _, c := range []struct {
		cas     string
		gaps    []string
		honored []string
		checked []string // gap checks run: the parts' fields
	}{
		{"process configuration", []string{"domainname"},
			[]string{"entrypoint", "env", "workingDir", "user", "hostname", "groupAdd"}, []string{"domainname"}},
		{"restart policy restarts a failing container", []string{"restart.maxRetries"}, []string{"restart"}, []string{"restart.maxRetries"}},
		{"network mode none and bridge with DNS servers", []string{"networkMode=none"}, []string{"networkMode=bridge", "networkMode=service", "dns"}, []string{"networkMode=none"}},
		{"network mode none and bridge with DNS servers", []string{"networkMode"}, []string{"dns"}, []string{"networkMode=none"}},
		{"capabilities added and dropped", []string{"capDrop"}, nil, []string{"capDrop"}},
		{"secrets and configs from file, environment and content", []string{"configs"}, []string{"secrets", "secrets.uid", "secrets.gid"}, []string{"configs"}},
	} {
		caps := backends.Capabilities{Gaps: map[string]string{}}
		for _, g := range c.gaps {
			caps.Gaps[g] = "test"
		}
		plan := planParts(caps, byName[c.cas].parts)
		var honored []string
		for _, p := range plan.honored {
			honored = append(honored, p.field)
		}
		checked := slices.Sorted(maps.Keys(plan.gaps))
		if !slices.Equal(honored, c.honored) || !slices.Equal(checked, slices.Sorted(slices.Values(c.checked))) {
			t.Errorf("%s with gaps %v: honored %v, gap checks %v; want %v, %v", c.cas, c.gaps, honored, checked, c.honored, c.checked)
		}
	}
}

// TestPartsPlanRefused: a declared refusal runs its part on its own (up
// must refuse it) and drops it from the deployment of the rest.
func TestPartsPlanRefused(t *testing.T) {
	var c testCase
	for _, tc := range cases {
		if tc.name == "network mode none and bridge with DNS servers" {
			c = tc
		}
	}
	plan := planParts(backends.Capabilities{Refused: map[string]string{"networkMode=service": "test"}}, c.parts)
	var honored []string
	for _, p := range plan.honored {
		honored = append(honored, p.field)
	}
	if want := []string{"networkMode=none", "networkMode=bridge", "dns"}; !slices.Equal(honored, want) {
		t.Errorf("honored %v, want %v", honored, want)
	}
	if plan.refused["networkMode=service"] != "networkMode=service" || len(plan.refused) != 1 {
		t.Errorf("refusal checks %v, want networkMode=service alone", plan.refused)
	}
}

// TestRelated: the warning-to-part match of the runner.
func TestRelated(t *testing.T) {
	for _, c := range [][2]string{{"configs.uid", "configs"}, {"networkMode=none", "networkMode"}, {"networkMode", "networkMode=none"}, {"dns", "dns"}} {
		if !related(c[0], c[1]) {
			t.Errorf("related(%q, %q) = false", c[0], c[1])
		}
	}
	for _, c := range [][2]string{{"dns", "dnsSearch"}, {"networkMode=none", "networkMode=bridge"}, {"restart", "restart2"}} {
		if related(c[0], c[1]) {
			t.Errorf("related(%q, %q) = true", c[0], c[1])
		}
	}
}
