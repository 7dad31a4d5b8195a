package plugin

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

func ptr[T any](v T) *T { return &v }

// Locks down parsing of every docker global option in every form the
// docker CLI's pflag accepts, ending at the plugin name.
func TestParseArgsGlobals(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want GlobalOptions
		rest []string
	}{
		{"none", []string{"cornus", "version"}, GlobalOptions{}, []string{"version"}},
		{"config space", []string{"--config", "/c", "cornus", "version"}, GlobalOptions{Config: "/c"}, []string{"version"}},
		{"config equals", []string{"--config=/c", "cornus"}, GlobalOptions{Config: "/c"}, []string{}},
		{"context long", []string{"--context", "prod", "cornus", "ps"}, GlobalOptions{Context: "prod"}, []string{"compose", "ps"}},
		{"context long equals", []string{"--context=prod", "cornus", "ps"}, GlobalOptions{Context: "prod"}, []string{"compose", "ps"}},
		{"context short", []string{"-c", "prod", "cornus", "ps"}, GlobalOptions{Context: "prod"}, []string{"compose", "ps"}},
		{"context short attached", []string{"-cprod", "cornus", "ps"}, GlobalOptions{Context: "prod"}, []string{"compose", "ps"}},
		{"context short equals", []string{"-c=prod", "cornus", "ps"}, GlobalOptions{Context: "prod"}, []string{"compose", "ps"}},
		{"debug", []string{"-D", "cornus"}, GlobalOptions{Debug: true}, []string{}},
		{"debug long", []string{"--debug", "cornus"}, GlobalOptions{Debug: true}, []string{}},
		{"debug false", []string{"--debug=false", "cornus"}, GlobalOptions{}, []string{}},
		{"host", []string{"-H", "unix:///a.sock", "cornus"}, GlobalOptions{Hosts: []string{"unix:///a.sock"}}, []string{}},
		{"host attached", []string{"-Hunix:///a.sock", "cornus"}, GlobalOptions{Hosts: []string{"unix:///a.sock"}}, []string{}},
		{"host equals", []string{"-H=tcp://h:1", "cornus"}, GlobalOptions{Hosts: []string{"tcp://h:1"}}, []string{}},
		{"host long", []string{"--host", "tcp://h:1", "cornus"}, GlobalOptions{Hosts: []string{"tcp://h:1"}}, []string{}},
		{"host long equals", []string{"--host=tcp://h:1", "cornus"}, GlobalOptions{Hosts: []string{"tcp://h:1"}}, []string{}},
		{"host repeated", []string{"-H", "a", "--host=b", "cornus"}, GlobalOptions{Hosts: []string{"a", "b"}}, []string{}},
		{"grouped shorthands", []string{"-DH", "unix:///a.sock", "cornus"}, GlobalOptions{Debug: true, Hosts: []string{"unix:///a.sock"}}, []string{}},
		{"log level", []string{"-l", "debug", "cornus"}, GlobalOptions{LogLevel: "debug"}, []string{}},
		{"log level long equals", []string{"--log-level=warn", "cornus"}, GlobalOptions{LogLevel: "warn"}, []string{}},
		{"tls", []string{"--tls", "cornus"}, GlobalOptions{TLS: true}, []string{}},
		{"tlsverify", []string{"--tlsverify", "cornus"}, GlobalOptions{TLSVerify: ptr(true)}, []string{}},
		{"tlsverify false", []string{"--tlsverify=false", "cornus"}, GlobalOptions{TLSVerify: ptr(false)}, []string{}},
		{"tls files", []string{"--tlscacert", "/t/ca.pem", "--tlscert=/t/cert.pem", "--tlskey", "/t/key.pem", "cornus"},
			GlobalOptions{TLSCACert: "/t/ca.pem", TLSCert: "/t/cert.pem", TLSKey: "/t/key.pem"}, []string{}},
		{"everything", []string{"--config", "/c", "-c", "x", "-D", "-l", "info", "--tls", "--tlsverify", "--tlscacert=/t/ca.pem", "--tlscert", "/t/cert.pem", "--tlskey=/t/key.pem", "cornus", "up", "-d"},
			GlobalOptions{Config: "/c", Context: "x", Debug: true, LogLevel: "info", TLS: true, TLSVerify: ptr(true), TLSCACert: "/t/ca.pem", TLSCert: "/t/cert.pem", TLSKey: "/t/key.pem"},
			[]string{"compose", "up", "-d"}},
		{"options after the plugin name are cornus's", []string{"cornus", "-H", "x", "ps"}, GlobalOptions{}, []string{"-H", "x", "ps"}},
		{"double dash ends options", []string{"-D", "--", "cornus", "version"}, GlobalOptions{Debug: true}, []string{"version"}},
		{"docker help cornus", []string{"help", "cornus", "up"}, GlobalOptions{}, []string{"help", "compose", "up"}},
		{"completion", []string{"__complete", "cornus", "ps", ""}, GlobalOptions{}, []string{"__complete", "compose", "ps", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := ParseArgs(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(inv.Globals, tc.want) {
				t.Errorf("globals = %+v, want %+v", inv.Globals, tc.want)
			}
			if len(inv.Args) == 0 && len(tc.rest) == 0 {
				return
			}
			if !reflect.DeepEqual(inv.Args, tc.rest) {
				t.Errorf("args = %q, want %q", inv.Args, tc.rest)
			}
		})
	}
}

// Locks down the errors for argv the docker CLI would never build.
func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no plugin name", []string{"version"}, `got "version"`},
		{"nothing", nil, "got nothing"},
		{"options only", []string{"-D"}, "got nothing"},
		{"unknown option", []string{"--bogus", "cornus"}, "unknown flag: --bogus"},
		{"missing value", []string{"--context"}, "needs an argument"},
		{"bad log level", []string{"-l", "loud", "cornus"}, `--log-level "loud"`},
		{"bad bool", []string{"--tls=maybe", "cornus"}, "invalid argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseArgs(tc.args)
			if err == nil {
				t.Fatalf("ParseArgs(%q) succeeded", tc.args)
			}
			if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error = %v, want InvalidArgument containing %q", err, tc.msg)
			}
		})
	}
}
