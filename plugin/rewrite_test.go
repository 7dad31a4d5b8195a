package plugin

import (
	"reflect"
	"testing"
)

// Locks down the `docker cornus` shorthands: compose verbs, with or
// without compose's global flags first, gain `compose`; other commands
// pass through unchanged.
func TestRewrite(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"up"}, []string{"compose", "up"}},
		{[]string{"up", "-d"}, []string{"compose", "up", "-d"}},
		{[]string{"-f", "x.yaml", "up", "-d"}, []string{"compose", "-f", "x.yaml", "up", "-d"}},
		{[]string{"--file", "x.yaml", "ps"}, []string{"compose", "--file", "x.yaml", "ps"}},
		{[]string{"--file=x.yaml", "ps"}, []string{"compose", "--file=x.yaml", "ps"}},
		{[]string{"-fx.yaml", "ps"}, []string{"compose", "-fx.yaml", "ps"}},
		{[]string{"-f=x.yaml", "ps"}, []string{"compose", "-f=x.yaml", "ps"}},
		{[]string{"-p", "demo", "--profile", "dev", "--env-file", ".env.x", "--project-directory", "/p", "--progress", "plain", "--devcontainer", "dc.json", "logs", "-f"},
			[]string{"compose", "-p", "demo", "--profile", "dev", "--env-file", ".env.x", "--project-directory", "/p", "--progress", "plain", "--devcontainer", "dc.json", "logs", "-f"}},
		{[]string{"-f", "a.yaml", "-f", "b.yaml", "down", "-v"}, []string{"compose", "-f", "a.yaml", "-f", "b.yaml", "down", "-v"}},
		{[]string{"config"}, []string{"compose", "config"}},
		{[]string{"exec", "web", "sh"}, []string{"compose", "exec", "web", "sh"}},
		// pass-through
		{[]string{"compose", "ps"}, []string{"compose", "ps"}},
		{[]string{"compose", "-f", "x.yaml", "up"}, []string{"compose", "-f", "x.yaml", "up"}},
		{[]string{"deploy", "-f", "deploy.yaml"}, []string{"deploy", "-f", "deploy.yaml"}},
		{[]string{"image", "load", "-i", "x.tar"}, []string{"image", "load", "-i", "x.tar"}},
		{[]string{"images"}, []string{"compose", "images"}},
		{[]string{"validate", "deploy.yaml"}, []string{"validate", "deploy.yaml"}},
		{[]string{"version"}, []string{"version"}},
		{[]string{"daemon", "--listen", "x"}, []string{"daemon", "--listen", "x"}},
		{[]string{"plugin", "install"}, []string{"plugin", "install"}},
		{[]string{"help", "up"}, []string{"help", "up"}},
		{[]string{"--help"}, []string{"--help"}},
		{[]string{"-f", "x.yaml"}, []string{"-f", "x.yaml"}},
		{[]string{"-f"}, []string{"-f"}},
		{[]string{"--bogus", "up"}, []string{"--bogus", "up"}},
		{[]string{"--", "up"}, []string{"--", "up"}},
		{[]string{"upp"}, []string{"upp"}},
		{[]string{}, []string{}},
	} {
		in := append([]string(nil), tc.in...)
		got := Rewrite(in)
		if !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !reflect.DeepEqual(in, tc.in) && len(in) > 0 {
			t.Errorf("Rewrite(%q) modified its input to %q", tc.in, in)
		}
	}
}
