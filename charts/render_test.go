package charts

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from helm template")

// cases are the value sets the chart is rendered with by both renderers:
// deterministic ones (no generated token or certificate).
var cases = []struct {
	name string
	set  []string
}{
	{"default", []string{"tokens.token=cornus_test", "tls.secretName=cornus-api-tls"}},
	{"nodeport-insecure-ingress", []string{"insecure=true", "service.type=NodePort", "service.nodePort=30443",
		"ingress.enabled=true", "ingress.host=cornus.example", "ingress.tlsSecretName=cornus-example-tls",
		"tokens.existingSecret=my-tokens", "persistence.keep=false", "backendEnv.CORNUS_K8S_PUBLISH=nodeport",
		"agentImage=registry.example/cornus-agent:1", "image.tag=abc123"}},
}

// helm is the path of the helm binary scripts/helm.sh builds and caches.
func helm(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/helm.sh").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("helm is required under CI (scripts/setup.sh builds it): %v", err)
		}
		t.Skipf("no helm (scripts/helm.sh builds it, ~7 min once): %v", err)
	}
	return string(bytes.TrimSpace(out))
}

func helmTemplate(t *testing.T, bin string, set []string) string {
	t.Helper()
	args := []string{"template", "cornus", "cornus", "--namespace", "cornus"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func render(t *testing.T, service string, set []string, showOnly ...string) []Document {
	t.Helper()
	values := map[string]any{}
	for _, s := range set {
		if err := SetValue(values, s); err != nil {
			t.Fatal(err)
		}
	}
	docs, err := Render(Cornus(), Options{Service: service, Values: values, ShowOnly: showOnly})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// objects parses helm template's output (or Text's) into its documents.
func objects(t *testing.T, text string) []any {
	t.Helper()
	var out []any
	for _, part := range strings.Split(text, "\n---") {
		if strings.TrimSpace(stripComments(strings.TrimPrefix(part, "---"))) == "" {
			continue
		}
		var v any
		if err := yaml.Unmarshal([]byte(part), &v); err != nil {
			t.Fatalf("%v in\n%s", err, part)
		}
		out = append(out, v)
	}
	return out
}

// Issue 28: `cornus k8s manifests` renders the chart's templates into the
// objects helm template makes, in the same order, and helm template's
// output is pinned (testdata/*.golden.yaml, go test -update rewrites).
func TestRenderMatchesHelm(t *testing.T) {
	bin := helm(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := helmTemplate(t, bin, c.set)
			golden := filepath.Join("testdata", c.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("helm template differs from %s (go test ./charts -update after a deliberate change):\n%s", golden, out)
			}
			h, g := objects(t, out), objects(t, Text(render(t, "Helm", c.set)))
			if len(h) != len(g) {
				t.Fatalf("helm made %d objects, cornus %d", len(h), len(g))
			}
			for i := range h {
				if !reflect.DeepEqual(h[i], g[i]) {
					hb, _ := yaml.Marshal(h[i])
					gb, _ := yaml.Marshal(g[i])
					t.Errorf("object %d differs:\nhelm:\n%s\ncornus:\n%s", i, hb, gb)
				}
			}
		})
	}
}

// Issue 28: helm lint is clean with the chart's own values and with each
// case's.
func TestHelmLint(t *testing.T) {
	bin := helm(t)
	for _, c := range append(cases, struct {
		name string
		set  []string
	}{"values.yaml", nil}) {
		args := []string{"lint", "--strict", "cornus"}
		for _, s := range c.set {
			args = append(args, "--set", s)
		}
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("helm lint (%s): %v\n%s", c.name, err, out)
		}
	}
}

func secretData(t *testing.T, docs []Document, name string) map[string]string {
	t.Helper()
	for _, d := range docs {
		var o struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Data     map[string]string     `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(d.YAML), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "Secret" && o.Metadata.Name == name {
			out := map[string]string{}
			for k, v := range o.Data {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					t.Fatalf("%s.%s: %v", name, k, err)
				}
				out[k] = string(b)
			}
			return out
		}
	}
	t.Fatalf("no Secret %s rendered", name)
	return nil
}

// Issue 28: with no Secrets of their own given, the chart makes an
// operator token (its digest in the tokens file, never the token) and a
// certificate for the Service's names and 127.0.0.1 signed by its own CA.
func TestGeneratedSecrets(t *testing.T) {
	docs := render(t, "", nil)
	tok := secretData(t, docs, "cornus-tokens")
	if !strings.HasPrefix(tok["token"], "cornus_") || len(tok["token"]) != len("cornus_")+43 {
		t.Errorf("token %q: want cornus_ and 43 random characters", tok["token"])
	}
	sum := sha256.Sum256([]byte(tok["token"]))
	if want := "operator:sha256:" + hex.EncodeToString(sum[:]) + " role=operator\n"; tok["tokens"] != want {
		t.Errorf("tokens file %q, want %q", tok["tokens"], want)
	}
	if strings.Contains(tok["tokens"], tok["token"]) {
		t.Error("the tokens file holds the token")
	}
	if again := secretData(t, render(t, "", nil), "cornus-tokens"); again["token"] == tok["token"] {
		t.Error("two renders made the same token")
	}
	tls := secretData(t, docs, "cornus-tls")
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(tls["ca.crt"])) {
		t.Fatal("ca.crt holds no certificate")
	}
	b, _ := pem.Decode([]byte(tls["tls.crt"]))
	if b == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cornus.cornus.svc", "cornus.cornus.svc.cluster.local", "localhost", "127.0.0.1"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("certificate for %s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "other.example", Roots: pool}); err == nil {
		t.Error("the certificate verifies for a name it was not made for")
	}
}
