package backends

import (
	"context"
	"io"
	"net"
)

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

// ContainerdSite names a containerd and the namespace of its images.
type ContainerdSite struct {
	Address   string
	Namespace string
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
