package clientdeploy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// --credential: each kind of source, one service or all, a flag replacing
// the spec's credential of the same name; bad values name the flag and
// the form.
func TestCredentialFlag(t *testing.T) {
	p := spec.Project{Name: "p", Services: map[string]spec.App{
		"web": {Credentials: []spec.Credential{{Name: "tok", Source: &spec.CredentialSource{Env: "OLD"}}}},
		"db":  {},
	}}
	err := applyCredentials(&p, []string{
		"web/tok=file:secrets/tok",
		"aws@aws=cmd:aws configure export-credentials --format process",
		"db/config.json=helper:desktop:registry.example.com",
		"web/mint=cmd:./bin/mint --ttl 1h",
		"db/pw@env:DB_PASSWORD=env:PW",
	}, "/proj")
	if err != nil {
		t.Fatal(err)
	}
	aws := spec.Credential{Name: "aws", Deliver: "aws", Source: &spec.CredentialSource{Command: []string{"aws", "configure", "export-credentials", "--format", "process"}}}
	want := map[string][]spec.Credential{
		"web": {{Name: "tok", Source: &spec.CredentialSource{File: "/proj/secrets/tok"}}, aws,
			{Name: "mint", Source: &spec.CredentialSource{Command: []string{"/proj/bin/mint", "--ttl", "1h"}}}},
		"db": {aws, {Name: "config.json", Source: &spec.CredentialSource{Helper: "desktop", Registry: "registry.example.com"}},
			{Name: "pw", Deliver: "env", Variable: "DB_PASSWORD", Source: &spec.CredentialSource{Env: "PW"}}},
	}
	for svc, w := range want {
		if got := p.Services[svc].Credentials; !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %+v, want %+v", svc, got, w)
		}
	}
	for _, bad := range []struct{ v, says string }{
		{"tok", "no '='"},
		{"tok=VAR", "no KIND:VALUE"},
		{"tok=shell:echo", `unknown KIND "shell"`},
		{"web/a/b=env:A", "want 1-63 letters"},
		{"tok@smoke=env:A", `"smoke" is not one of file, aws, env`},
		{"tok@env=env:A", "deliver env needs the variable"},
		{"tok@env:A-B=env:A", "deliver env needs the variable"},
		{"tok=helper:desktop", "helper:HELPER:REGISTRY"},
		{"cache/tok=env:A", "no service cache"},
		{"/tok=env:A", "an empty SERVICE/"},
		{"a2@aws=env:A", "a second aws credential"},
	} {
		q := spec.Project{Name: "p", Services: map[string]spec.App{"web": {Credentials: []spec.Credential{{Name: "a1", Deliver: "aws"}}}}}
		if err := applyCredentials(&q, []string{bad.v}, "/proj"); err == nil || !strings.Contains(err.Error(), bad.says) || !strings.Contains(err.Error(), "--credential") {
			t.Errorf("%q: %v, want an error saying %q", bad.v, err, bad.says)
		}
	}
}
