package ocispec

import (
	"context"
	"slices"
	"testing"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	imagespec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
)

// An image and spec with no PATH get Docker's default, first; a PATH from
// either is kept as given.
func TestDefaultPath(t *testing.T) {
	for _, c := range []struct {
		name      string
		image, cs []string
		want      []string
	}{
		{"none", nil, nil, []string{"PATH=" + DefaultPath}},
		{"none, other variables", []string{"A=1"}, []string{"B=2"}, []string{"PATH=" + DefaultPath, "A=1", "B=2"}},
		{"image's", []string{"PATH=/opt/bin"}, nil, []string{"PATH=/opt/bin"}},
		{"spec's", nil, []string{"PATH=/x"}, []string{"PATH=/x"}},
	} {
		opts, err := Opts(Input{Spec: backends.ContainerSpec{Name: "x", Env: c.cs}, Backend: "test", RootFS: t.TempDir(),
			Image: imagespec.ImageConfig{Cmd: []string{"sh"}, Env: c.image}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := oci.GenerateSpec(namespaces.WithNamespace(context.Background(), "test"), nil, &containers.Container{ID: "abc"}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Process.Env, c.want) {
			t.Errorf("%s: env %q, want %q", c.name, s.Process.Env, c.want)
		}
	}
}
