package spec

import (
	"reflect"
	"strings"
	"testing"
)

// A deploy.yaml's credentials: names that can name a file, a known
// delivery, one AWS endpoint, one source; a relative file source is the
// project directory's; the source never travels in the spec's JSON.
func TestCredentials(t *testing.T) {
	p, err := Load("/proj/deploy.yaml", "/proj", []byte(`name: c
services:
  app:
    image: x
    credentials:
      - {name: tok, source: {file: ./tok.txt}}
      - {name: mint, source: {command: [./bin/mint, ./arg]}}
      - {name: aws, deliver: aws, source: {command: [aws, configure, export-credentials, --format, process]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	cs := p.Services["app"].Credentials
	if len(cs) != 3 || cs[0].Source == nil || cs[0].Source.File != "/proj/tok.txt" || cs[2].Deliver != DeliverAWS ||
		!reflect.DeepEqual(cs[1].Source.Command, []string{"/proj/bin/mint", "./arg"}) || cs[2].Source.Command[0] != "aws" {
		t.Fatalf("credentials: %+v", cs)
	}
	js, err := p.EncodeJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "tok.txt") || strings.Contains(string(js), "export-credentials") {
		t.Errorf("a source in the spec's JSON:\n%s", js)
	}
	bad := Project{Name: "c", Services: map[string]App{"app": {Image: "x", Credentials: []Credential{
		{Name: "../x"}, {Name: "ok", Deliver: "smoke"}, {Name: "ok"},
		{Name: "a1", Deliver: DeliverAWS}, {Name: "a2", Deliver: DeliverAWS},
		{Name: "two", Source: &CredentialSource{Env: "A", File: "b"}}, {Name: "none", Source: &CredentialSource{}},
		{Name: "h1", Source: &CredentialSource{Helper: "../bin/sh", Registry: "r.example"}}, {Name: "h2", Source: &CredentialSource{Helper: "desktop"}},
	}}}}
	want := []string{
		`services.app.credentials[0].name: "../x": want 1-63 letters`,
		`services.app.credentials[1].deliver: "smoke" is not one of file, aws`,
		`services.app.credentials[2].name: "ok" is named twice`,
		`services.app.credentials[4].deliver: a second aws credential`,
		`services.app.credentials[5].source: want exactly one of command, file, env, helper`,
		`services.app.credentials[6].source: want exactly one of command, file, env, helper`,
		`services.app.credentials[7].source.helper: "../bin/sh": want the part after docker-credential-`,
		`services.app.credentials[8].source.registry: a helper needs the registry it logs in to`,
	}
	err = bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing problem %q in:\n%v", w, err)
		}
	}
	if n := strings.Count(err.Error(), "\n  "); n != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", n, len(want), err)
	}
}
