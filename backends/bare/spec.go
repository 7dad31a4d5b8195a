package bare

import (
	"context"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/cornus-dev/cornus/backends/internal/ocispec"
)

// generateSpec is the container's OCI runtime config (config.json):
// ocispec's options applied with no containerd (the user is looked up
// in the root at in.RootFS), then this backend's cgroups path.
func generateSpec(ctx context.Context, id string, in ocispec.Input) (*specs.Spec, error) {
	opts, err := ocispec.Opts(in)
	if err != nil {
		return nil, err
	}
	ctx = namespaces.WithNamespace(ctx, cgroupParent)
	s, err := oci.GenerateSpec(ctx, nil, &containers.Container{ID: id}, opts...)
	if err != nil {
		return nil, err
	}
	s.Linux.CgroupsPath = "/" + cgroupParent + "/" + id
	if s.Process.OOMScoreAdj != nil && *s.Process.OOMScoreAdj < 0 {
		s.Process.OOMScoreAdj = nil // a negative one needs CAP_SYS_RESOURCE
	}
	return s, nil
}
