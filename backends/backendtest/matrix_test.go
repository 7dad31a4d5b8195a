package backendtest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// untested lists spec fields no contract case observes, each with the
// reviewed reason. Everything else must be exercised by some case.
var untested = map[string]string{
	"pullPolicy":   "engine-level; covered by the images case (never) and engine tests",
	"platform":     "single-architecture test machines",
	"expose":       "metadata only: no behaviour to observe",
	"egress":       "engine-level: a caretaker companion created through the backend's own create; e2e/egress_test.go proves it on each backend",
	"devcontainer": "metadata for tools, never sent to a runtime",
	"credentials":  "the caretaker's credential role in remote mode, through the backend's own create; e2e/credentials_test.go proves it on each backend with one",
	"docker":       "the caretaker's docker role in remote mode, a socket bound into the app through the backend's own create; e2e/dockerrole_test.go proves it on each backend with one",
	"watch":        "compose watch acts on it on the client, through cp, exec and restart; e2e/watch_test.go proves it on each backend",
}

// TestCoverageMatrix keeps the contract complete: every spec.App field is
// exercised by a case (or declared untested with a reason), so a new spec
// field cannot reach a backend untested.
func TestCoverageMatrix(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range cases {
		for _, f := range c.allFields() {
			covered[strings.FieldsFunc(f, func(r rune) bool { return r == '.' || r == '=' })[0]] = true
		}
	}
	for _, c := range HostPowerCases {
		covered[strings.SplitN(strings.SplitN(c.Field, ".", 2)[0], "[", 2)[0]] = true
	}
	typ := reflect.TypeFor[spec.App]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if name == "-" || name == "" {
			continue
		}
		if !covered[name] && untested[name] == "" {
			t.Errorf("spec field %q is exercised by no contract case: add one, or list it in untested with the reason", name)
		}
		if covered[name] && untested[name] != "" {
			t.Errorf("spec field %q is both covered and listed as untested", name)
		}
	}
}
