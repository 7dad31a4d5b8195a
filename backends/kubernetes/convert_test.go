package kubernetes

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/cornus-dev/cornus/compose"
	"github.com/cornus-dev/cornus/load"
	"github.com/cornus-dev/cornus/spec"
)

var update = flag.Bool("update", false, "rewrite the golden manifests under testdata/convert")

// convertOptions are the `compose convert` flags of the cases that set any.
var convertOptions = map[string]RenderOptions{
	"nodeport": {Namespace: "shop", Publish: PublishNodePort, StorageClass: "fast"},
}

// TestRenderGolden locks down `cornus compose convert --format k8s`
// (issue 10): testdata/convert/<case>/compose.yaml renders to
// <case>.golden.yaml, warnings first as comments; the output is the same
// on every run and each document decodes strictly into its kind. -update
// rewrites the golden files.
func TestRenderGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "convert", "*", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases under testdata/convert")
	}
	for _, file := range dirs {
		dir := filepath.Dir(file)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, dir, convertOptions[name])
			if again := renderCase(t, dir, convertOptions[name]); !bytes.Equal(got, again) {
				t.Fatalf("two renders differ:\n%s\n---- and ----\n%s", got, again)
			}
			path := filepath.Join(dir, name+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestRenderGolden -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("manifests differ from %s (-update rewrites it):\n%s", path, got)
			}
			decodeStrict(t, got)
		})
	}
}

// renderCase loads a case's Compose file as the CLI does and renders it.
func renderCase(t *testing.T, dir string, o RenderOptions) []byte {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := load.Compose(context.Background(), compose.Options{
		Files: []string{filepath.Join(abs, "compose.yaml")}, WorkingDir: abs, Environ: []string{},
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	o.Content = func(_ string, fm spec.FileMount) ([]byte, error) {
		if fm.File != "" {
			return os.ReadFile(fm.File)
		}
		return []byte(fm.Content), nil
	}
	out, warns, err := Render(r.Project, o)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var b bytes.Buffer
	for _, w := range warns {
		fmt.Fprintf(&b, "# warning: %s\n", strings.ReplaceAll(w.String(), "\n", " "))
	}
	b.Write(out)
	return b.Bytes()
}

// decodeStrict fails on a document that is not one of the kinds Render
// emits or has a field its kind does not know.
func decodeStrict(t *testing.T, manifests []byte) {
	t.Helper()
	kinds := map[string]func() any{
		"NetworkPolicy":         func() any { return &networkingv1.NetworkPolicy{} },
		"PersistentVolumeClaim": func() any { return &corev1.PersistentVolumeClaim{} },
		"Secret":                func() any { return &corev1.Secret{} },
		"ConfigMap":             func() any { return &corev1.ConfigMap{} },
		"Service":               func() any { return &corev1.Service{} },
		"Deployment":            func() any { return &appsv1.Deployment{} },
		"Job":                   func() any { return &batchv1.Job{} },
	}
	docs := strings.Split(string(manifests), "---\n")[1:]
	if len(docs) == 0 {
		t.Fatal("no documents")
	}
	for i, doc := range docs {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		newObj, ok := kinds[meta.Kind]
		if !ok {
			t.Fatalf("document %d: unexpected kind %q", i, meta.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), newObj()); err != nil {
			t.Errorf("document %d (%s): %v", i, meta.Kind, err)
		}
	}
}

// A random hostPort is never one the node's kernel may hand out for port
// 0 (Linux's default ephemeral range) nor a NodePort: the pod's DNAT would
// take that node process's traffic.
func TestRandomHostPort(t *testing.T) {
	low, high := false, false
	for range 20000 {
		p := randomHostPort()
		if p < 10000 || p > 65535 || p >= 30000 && p <= 60999 {
			t.Fatalf("host port %d: in 30000-60999 or out of range", p)
		}
		low, high = low || p < 30000, high || p > 60999
	}
	if !low || !high {
		t.Fatalf("only one part of the range drawn (low %v, high %v)", low, high)
	}
}
