package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateExecLimits: a string Linux's exec would refuse (over
// MAX_ARG_STRLEN) or an argv+env over ARG_MAX is a validation problem
// naming the field and the limit, not a container that can never start
// (hardening issue, item 2).
func TestValidateExecLimits(t *testing.T) {
	long := strings.Repeat("x", MaxArgStrlen) // with its NUL, one byte over
	ok := strings.Repeat("x", MaxArgStrlen-1)
	chunk := strings.Repeat("y", 100_000)
	many := map[string]string{}
	for _, k := range []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S", "T", "U", "V"} {
		many[k] = chunk // 22 × 100 KB: each fine, together over 2 MiB
	}
	for _, c := range []struct {
		name string
		app  App
		want []string // one problem each, in order
	}{
		{"at the limit", App{Command: Command{ok}, Env: map[string]string{"K": ok[:MaxArgStrlen-3]}}, nil},
		{"command argument", App{Command: Command{"sh", long}},
			[]string{"services.web.command[1]: is 131072 bytes; Linux's exec takes at most 131072 per argument, counting its NUL (MAX_ARG_STRLEN)"}},
		{"entrypoint argument", App{Entrypoint: Command{long}},
			[]string{"services.web.entrypoint[0]: is 131072 bytes"}},
		{"environment entry", App{Env: map[string]string{"BIG": long}},
			[]string{"services.web.env: BIG=... is 131076 bytes; Linux's exec takes at most 131072 per environment entry"}},
		{"hook argument", App{Hooks: &Hooks{PostStart: []Hook{{Command: []string{"echo", long}}}}},
			[]string{"services.web.hooks.postStart[0].command[1]: is 131072 bytes"}},
		{"healthcheck argument", App{Healthcheck: &Healthcheck{Test: []string{"CMD-SHELL", long}}},
			[]string{"services.web.healthcheck.test[1]: is 131072 bytes"}},
		{"total", App{Env: many},
			[]string{"services.web: its command and environment together are 2200066 bytes; Linux's exec takes at most 2097152 (the default ARG_MAX)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.app.Image = "busybox"
			err := Project{Name: "p", Services: map[string]App{"web": c.app}}.Normalize().Validate()
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want a ValidationError", err)
			}
			var got []string
			for _, p := range ve.Problems {
				if strings.Contains(p.Message, "exec") {
					got = append(got, p.String())
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(c.want))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d:\n got %s\nwant %s...", i, got[i], w)
				}
			}
			if strings.Contains(err.Error(), chunk) || strings.Contains(err.Error(), long) {
				t.Error("the error repeats the value")
			}
		})
	}
}
