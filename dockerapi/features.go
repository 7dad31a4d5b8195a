package dockerapi

import (
	"context"
	"io"
	"net/http"

	"github.com/cornus-dev/cornus/backends"
)

// want returns the backend as an optional interface, or answers 501 (not
// implemented by this backend) and false.
func want[T any](s *Server, w http.ResponseWriter, f backends.Feature, what string) (T, bool) {
	t, err := backends.Want[T](s.b, f, what)
	if err != nil {
		writeError(w, err)
		return t, false
	}
	return t, true
}

// imageStore is the backend's image store, or one whose every call answers
// "not supported by the X backend" (501).
func (s *Server) imageStore() backends.Images {
	if i, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "images"); err == nil {
		return i
	}
	return noImages{s.b}
}

// networkStore is the backend's networks, or none (501 on changes).
func (s *Server) networkStore() backends.Networks {
	if n, err := backends.Want[backends.Networks](s.b, backends.FeatureNetworks, "networks"); err == nil {
		return n
	}
	return noNetworks{s.b}
}

type noImages struct{ b backends.Backend }

func (n noImages) InspectImage(context.Context, string) (backends.Image, error) {
	return backends.Image{}, backends.NotSupported(n.b, "images")
}
func (n noImages) LoadImage(context.Context, io.Reader) ([]string, error) {
	return nil, backends.NotSupported(n.b, "loading images")
}
func (n noImages) ListImages(context.Context) ([]backends.Image, error) { return nil, nil }
func (n noImages) RemoveImage(context.Context, string, bool) error {
	return backends.NotSupported(n.b, "removing images")
}

type noNetworks struct{ b backends.Backend }

func (n noNetworks) EnsureNetwork(context.Context, backends.NetworkSpec) (backends.Network, error) {
	return backends.Network{}, backends.NotSupported(n.b, "networks")
}
func (n noNetworks) ListNetworks(context.Context, backends.ListOptions) ([]backends.Network, error) {
	return nil, nil
}
func (n noNetworks) RemoveNetwork(context.Context, string) error {
	return backends.NotSupported(n.b, "networks")
}
