package plugin

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containerd/errdefs"
)

// writeContext stores a docker context the way `docker context create`
// does: <dir>/contexts/meta/<sha256 hex of name>/meta.json, and TLS files
// under contexts/tls/<digest>/docker when tls is set.
func writeContext(t *testing.T, dir, name, host string, skipTLS, tls bool) {
	t.Helper()
	meta := filepath.Join(dir, "contexts", "meta", contextDigest(name))
	if err := os.MkdirAll(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{"Name":"` + name + `","Metadata":{},"Endpoints":{"docker":{"Host":"` + host + `","SkipTLSVerify":` + map[bool]string{true: "true", false: "false"}[skipTLS] + `}}}`
	if err := os.WriteFile(filepath.Join(meta, "meta.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if tls {
		d := filepath.Join(dir, "contexts", "tls", contextDigest(name), "docker")
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func writeConfig(t *testing.T, dir, body string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Locks down the digest docker/cli's context store names directories
// with (checked against `docker context create tst`).
func TestContextDigest(t *testing.T) {
	if got := contextDigest("tst"); got != "05d5c1b6280baf2e3763f17828cfe0022693d7df18203cbb120c41a192a3783c" {
		t.Errorf("contextDigest(tst) = %s", got)
	}
}

// Locks down daemon selection: docker/cli's precedence (--context, -H,
// DOCKER_HOST, DOCKER_CONTEXT, currentContext, default), the context store
// layout, and what reaches the dockerhost backend's environ.
func TestResolve(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".docker")       // $HOME/.docker
	other := filepath.Join(t.TempDir(), "conf") // DOCKER_CONFIG / --config
	writeConfig(t, cfg, `{"auths":{},"currentContext":"fromconfig"}`)
	writeContext(t, cfg, "fromconfig", "unix:///run/fromconfig.sock", false, false)
	writeContext(t, cfg, "prod", "tcp://prod.example:2376", false, true)
	writeContext(t, cfg, "insecure", "tcp://lab.example:2376", true, false)
	writeContext(t, cfg, "local", "unix:///run/local.sock", false, false)
	writeConfig(t, other, `{"currentContext":"elsewhere"}`)
	writeContext(t, other, "elsewhere", "unix:///run/elsewhere.sock", false, false)
	prodTLS := filepath.Join(cfg, "contexts", "tls", contextDigest("prod"), "docker")
	base := []string{"HOME=" + home, "PATH=/bin"}

	for _, tc := range []struct {
		name    string
		g       GlobalOptions
		env     []string
		context string
		host    string            // ResolveResult.Host
		want    map[string]string // env entries that must be set ("" = must be unset)
		warn    string
	}{
		{name: "currentContext in config.json", context: "fromconfig", host: "unix:///run/fromconfig.sock",
			want: map[string]string{"DOCKER_HOST": "unix:///run/fromconfig.sock"}},
		{name: "-H wins over contexts in env and config", g: GlobalOptions{Hosts: []string{"unix:///x.sock"}}, env: []string{"DOCKER_CONTEXT=local", "DOCKER_HOST=unix:///old.sock"},
			context: "default", host: "unix:///x.sock", want: map[string]string{"DOCKER_HOST": "unix:///x.sock"}},
		{name: "-H without scheme is tcp with the default port", g: GlobalOptions{Hosts: []string{"10.0.0.1"}},
			context: "default", host: "tcp://10.0.0.1:2375", want: map[string]string{"DOCKER_HOST": "tcp://10.0.0.1:2375"}},
		{name: "-H tcp with --tlsverify gets 2376", g: GlobalOptions{Hosts: []string{"tcp://h"}, TLSVerify: ptr(true)},
			context: "default", host: "tcp://h:2376", want: map[string]string{"DOCKER_HOST": "tcp://h:2376", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": cfg},
			warn: "does not support TLS"},
		{name: "-H unix:// is the default socket", g: GlobalOptions{Hosts: []string{"unix://"}},
			context: "default", host: "unix:///var/run/docker.sock", want: map[string]string{"DOCKER_HOST": "unix:///var/run/docker.sock"}},
		{name: "--context", g: GlobalOptions{Context: "local"}, env: []string{"DOCKER_HOST=unix:///old.sock", "DOCKER_CONTEXT=prod"},
			context: "local", host: "unix:///run/local.sock", want: map[string]string{"DOCKER_HOST": "unix:///run/local.sock"}},
		{name: "--context clears the default context's TLS environment", g: GlobalOptions{Context: "local"}, env: []string{"DOCKER_TLS_VERIFY=1", "DOCKER_CERT_PATH=/certs"},
			context: "local", host: "unix:///run/local.sock", want: map[string]string{"DOCKER_HOST": "unix:///run/local.sock", "DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": ""}},
		{name: "--context default keeps DOCKER_HOST", g: GlobalOptions{Context: "default"}, env: []string{"DOCKER_HOST=unix:///env.sock"},
			context: "default", host: "unix:///env.sock", want: map[string]string{"DOCKER_HOST": "unix:///env.sock"}},
		{name: "--context default without DOCKER_HOST leaves cornus's default", g: GlobalOptions{Context: "default"}, env: []string{"CORNUS_DOCKER_SOCK=/c.sock"},
			context: "default", host: "", want: map[string]string{"DOCKER_HOST": "", "CORNUS_DOCKER_SOCK": "/c.sock"}},
		{name: "DOCKER_HOST wins over DOCKER_CONTEXT and currentContext", env: []string{"DOCKER_HOST=unix:///env.sock", "DOCKER_CONTEXT=local"},
			context: "default", host: "unix:///env.sock", want: map[string]string{"DOCKER_HOST": "unix:///env.sock"}},
		{name: "DOCKER_CONTEXT wins over currentContext", env: []string{"DOCKER_CONTEXT=local"},
			context: "local", host: "unix:///run/local.sock", want: map[string]string{"DOCKER_HOST": "unix:///run/local.sock"}},
		{name: "DOCKER_CONTEXT=default", env: []string{"DOCKER_CONTEXT=default"},
			context: "default", host: "", want: map[string]string{"DOCKER_HOST": ""}},
		{name: "DOCKER_CONFIG picks the config dir", env: []string{"DOCKER_CONFIG=" + other},
			context: "elsewhere", host: "unix:///run/elsewhere.sock", want: map[string]string{"DOCKER_HOST": "unix:///run/elsewhere.sock", "DOCKER_CONFIG": other}},
		{name: "--config wins and is passed on as DOCKER_CONFIG", g: GlobalOptions{Config: other}, env: []string{"DOCKER_CONFIG=/nope"},
			context: "elsewhere", host: "unix:///run/elsewhere.sock", want: map[string]string{"DOCKER_HOST": "unix:///run/elsewhere.sock", "DOCKER_CONFIG": other}},
		{name: "no config.json is the default context", g: GlobalOptions{Config: t.TempDir()},
			context: "default", host: "", want: map[string]string{"DOCKER_HOST": ""}},
		{name: "context with TLS material", g: GlobalOptions{Context: "prod"},
			context: "prod", host: "tcp://prod.example:2376", want: map[string]string{"DOCKER_HOST": "tcp://prod.example:2376", "DOCKER_CERT_PATH": prodTLS, "DOCKER_TLS_VERIFY": "1"},
			warn: `docker context "prod" uses TLS`},
		{name: "context skipping TLS verification", g: GlobalOptions{Context: "insecure"}, env: []string{"DOCKER_TLS_VERIFY=1"},
			context: "insecure", host: "tcp://lab.example:2376", want: map[string]string{"DOCKER_TLS_VERIFY": "", "DOCKER_CERT_PATH": ""},
			warn: `docker context "insecure" uses TLS`},
		{name: "--tlsverify=false unsets DOCKER_TLS_VERIFY", g: GlobalOptions{TLSVerify: ptr(false)}, env: []string{"DOCKER_HOST=tcp://h:2376", "DOCKER_TLS_VERIFY=1"},
			context: "default", host: "tcp://h:2376", want: map[string]string{"DOCKER_TLS_VERIFY": ""}},
		{name: "TLS files from one directory", g: GlobalOptions{TLS: true, TLSCACert: "/t/ca.pem", TLSCert: "/t/cert.pem", TLSKey: "/t/key.pem"}, env: []string{"DOCKER_HOST=tcp://h:2376"},
			context: "default", host: "tcp://h:2376", want: map[string]string{"DOCKER_CERT_PATH": "/t", "DOCKER_TLS_VERIFY": ""}, warn: "does not support TLS"},
		{name: "--tls uses DOCKER_CERT_PATH", g: GlobalOptions{TLS: true, TLSKey: "/certs/key.pem"}, env: []string{"DOCKER_HOST=tcp://h:2376", "DOCKER_CERT_PATH=/certs"},
			context: "default", host: "tcp://h:2376", want: map[string]string{"DOCKER_CERT_PATH": "/certs"}, warn: "does not support TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(slices.Clone(base), tc.env...)
			before := slices.Clone(env)
			r, err := Resolve(ResolveOptions{Globals: tc.g, Environ: env})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(env, before) {
				t.Errorf("Resolve modified its input environ")
			}
			if r.Context != tc.context || r.Host != tc.host {
				t.Errorf("context, host = %q, %q; want %q, %q (source %s)", r.Context, r.Host, tc.context, tc.host, r.Source)
			}
			for k, v := range tc.want {
				n := 0
				for _, kv := range r.Environ {
					if strings.HasPrefix(kv, k+"=") {
						n++
					}
				}
				if got := getEnv(r.Environ, k); got != v || (v != "" && n != 1) {
					t.Errorf("%s = %q (%d entries), want %q once", k, got, n, v)
				}
			}
			if getEnv(r.Environ, "HOME") != home || getEnv(r.Environ, "PATH") != "/bin" {
				t.Errorf("unrelated variables lost: %q", r.Environ)
			}
			joined := strings.Join(r.Warnings, "\n")
			if (tc.warn == "") != (joined == "") || !strings.Contains(joined, tc.warn) {
				t.Errorf("warnings = %q, want one containing %q", r.Warnings, tc.warn)
			}
		})
	}
}

// Locks down the errors: an unknown context names itself and `docker
// context ls`; conflicts and unusable layouts say what to change.
func TestResolveErrors(t *testing.T) {
	home := t.TempDir()
	cfg := filepath.Join(home, ".docker")
	writeConfig(t, cfg, `{"currentContext":"gone"}`)
	nodocker := filepath.Join(cfg, "contexts", "meta", contextDigest("k8s-only"))
	if err := os.MkdirAll(nodocker, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nodocker, "meta.json"), []byte(`{"Name":"k8s-only","Endpoints":{"kubernetes":{}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken")
	writeConfig(t, broken, `{"currentContext":`)
	for _, tc := range []struct {
		name  string
		g     GlobalOptions
		env   []string
		class error
		msg   []string
	}{
		{"unknown --context", GlobalOptions{Context: "nope"}, nil, errdefs.ErrNotFound, []string{`docker context "nope" does not exist`, "docker context ls", "--context"}},
		{"unknown DOCKER_CONTEXT", GlobalOptions{}, []string{"DOCKER_CONTEXT=nope"}, errdefs.ErrNotFound, []string{`"nope"`, "docker context ls", "DOCKER_CONTEXT"}},
		{"unknown currentContext", GlobalOptions{}, nil, errdefs.ErrNotFound, []string{`"gone"`, "docker context ls", filepath.Join(cfg, "config.json")}},
		{"no docker endpoint", GlobalOptions{Context: "k8s-only"}, nil, errdefs.ErrInvalidArgument, []string{`"k8s-only" has no docker endpoint`}},
		{"broken config.json", GlobalOptions{Config: broken}, nil, errdefs.ErrInvalidArgument, []string{filepath.Join(broken, "config.json")}},
		{"two -H", GlobalOptions{Hosts: []string{"a", "b"}}, nil, errdefs.ErrInvalidArgument, []string{"specify only one -H"}},
		{"-H and --context", GlobalOptions{Hosts: []string{"a"}, Context: "x"}, nil, errdefs.ErrInvalidArgument, []string{"cannot specify both --host and --context"}},
		{"empty -H", GlobalOptions{Hosts: []string{" "}}, nil, errdefs.ErrInvalidArgument, []string{"empty daemon address"}},
		{"TLS file names", GlobalOptions{TLSCACert: "/t/my-ca.crt"}, []string{"DOCKER_HOST=tcp://h:1"}, errdefs.ErrNotImplemented, []string{"--tlscacert /t/my-ca.crt", "ca.pem, cert.pem and key.pem"}},
		{"TLS files in two directories", GlobalOptions{TLSCACert: "/a/ca.pem", TLSCert: "/b/cert.pem", TLSKey: "/b/key.pem"}, []string{"DOCKER_HOST=tcp://h:1"}, errdefs.ErrNotImplemented, []string{"--tlscert /b/cert.pem"}},
		{"TLS files mixed with defaults", GlobalOptions{TLSCACert: "/a/ca.pem"}, []string{"DOCKER_HOST=tcp://h:1"}, errdefs.ErrNotImplemented, []string{"mixed with defaults in " + cfg}},
		{"no HOME", GlobalOptions{}, []string{"HOME="}, errdefs.ErrInvalidArgument, []string{"set DOCKER_CONFIG or HOME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"HOME=" + home}, tc.env...)
			_, err := Resolve(ResolveOptions{Globals: tc.g, Environ: env})
			if err == nil {
				t.Fatal("Resolve succeeded")
			}
			if !errors.Is(err, tc.class) {
				t.Errorf("error class: %v, want %v", err, tc.class)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not contain %q", err, m)
				}
			}
		})
	}
}

// Locks down Prepare: parse, resolve and rewrite in one step, and what
// turns debug reporting on.
func TestPrepare(t *testing.T) {
	cfg := t.TempDir()
	writeContext(t, cfg, "lab", "unix:///run/lab.sock", false, false)
	p, err := Prepare(PrepareOptions{
		Args:    []string{"--config", cfg, "--context=lab", "-l", "debug", "cornus", "-f", "x.yaml", "up", "-d"},
		Environ: []string{"HOME=/nonexistent"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"compose", "-f", "x.yaml", "up", "-d"}; !slices.Equal(p.Args, want) {
		t.Errorf("args = %q, want %q", p.Args, want)
	}
	if getEnv(p.Environ, "DOCKER_HOST") != "unix:///run/lab.sock" || getEnv(p.Environ, "DOCKER_CONFIG") != cfg || !p.Debug || p.Daemon.Context != "lab" {
		t.Errorf("prepare = %+v", p)
	}
	if _, err := Prepare(PrepareOptions{Args: []string{"--context", "nope", "--config", cfg, "cornus", "ps"}}); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("unknown context: %v", err)
	}
}
