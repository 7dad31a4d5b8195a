package backends

import (
	"context"
	"io"
	"net"

	"github.com/containerd/containerd/v2/core/content"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ImageSaver is a backend that writes an image as a docker-archive
// (docker save): the server's registry exports the backend's images
// with it.
type ImageSaver interface {
	SaveImage(ctx context.Context, ref string, w io.Writer) error
}

// RegistryPuller is a backend whose runtime pulls every image itself and
// loads none (kubernetes: the nodes pull). A server in front of it keeps
// what tenants load and push in its own registry, and the runtime pulls
// it from there with ContainerSpec.PullAuth.
type RegistryPuller interface{ PullsFromRegistry() }

// Builder is a backend whose runtime builds images into its own store
// (the builder package runs every build; this says where). A backend
// without it has its images built by a buildkitd of cornus's own (its OCI
// worker) and brought in with Images.LoadImage.
type Builder interface {
	BuildSite(ctx context.Context) (BuildSite, error)
}

// BuildSite is where a backend's images are built: exactly one field is
// set.
type BuildSite struct {
	// Dial opens a stream to the runtime's own BuildKit (dockerd's):
	// path "/grpc" (its control API) or "/session" (a build session),
	// upgraded to proto with the headers meta, as docker buildx's docker
	// driver does. Results are stored with BuildKit's "moby" exporter.
	Dial func(ctx context.Context, path, proto string, meta map[string][]string) (net.Conn, error)
	// Containerd is the containerd whose store the backend runs images
	// from: a buildkitd containerd worker on it stores results there.
	Containerd *ContainerdSite
	// Native builds from a tar of the context with the runtime's own
	// builder (podman's buildah), which stores the result.
	Native func(ctx context.Context, tar io.Reader, o NativeBuild) (NativeResult, error)
}

// ContainerdSite names a containerd, the namespace of the backend's
// images and the snapshotter it runs them with.
type ContainerdSite struct {
	Address     string
	Namespace   string
	Snapshotter string
}

// NativeBuild is a build a runtime runs itself from a tar of the context
// (the context's ignore file already applied). Secrets are files inside
// the tar, at their SecretPaths.
type NativeBuild struct {
	Dockerfile  string // path inside the tar
	Tags        []string
	Args        map[string]string
	Labels      map[string]string
	Target      string
	NoCache     bool
	Pull        bool
	Network     string // "", "none" or "host"
	ExtraHosts  []string
	ShmSize     int64
	Platform    string
	SecretPaths map[string]string // secret id → path inside the tar
	// Progress receives the builder's output, line by line.
	Progress io.Writer
}

// NativeResult is a native build's image.
type NativeResult struct {
	ID string
}

// ImageContenter is a backend whose images can be read as OCI content:
// a build on a builder that cannot see the backend's store (buildkitd's
// OCI worker) takes its base images from it, offline.
type ImageContenter interface {
	// ImageContent returns ref's content (its manifest or index, config
	// and layers); Release ends the read (a removal may then collect the
	// blobs).
	ImageContent(ctx context.Context, ref string) (ImageContent, error)
}

// ImageContent is one image's content in a store.
type ImageContent struct {
	Store   content.Store
	Target  ocispec.Descriptor
	Release func()
}
