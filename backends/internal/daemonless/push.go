package daemonless

import (
	"context"
	"fmt"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/platforms"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/spec"
)

// PushManifest sends desc and the blobs it references from store to the registry
// of name (a full name), with auth alone: this host's registry logins are
// never read. Of an index only this platform's manifest goes (the one a
// single-platform store holds), under the name, as docker push does.
func (c *Core) PushManifest(ctx context.Context, name string, desc ocispec.Descriptor, store content.Provider, auth spec.RegistryAuth) error {
	desc, err := platformManifest(ctx, store, desc)
	if err != nil {
		return fmt.Errorf("push %s: %w", name, err)
	}
	creds := func(string) (string, string, error) {
		if auth.IdentityToken != "" {
			return "", auth.IdentityToken, nil // the authorizer's refresh-token form
		}
		return auth.Username, auth.Password, nil
	}
	hosts := docker.ConfigureDefaultRegistries(docker.WithPlainHTTP(c.plainHTTP),
		docker.WithAuthorizer(docker.NewDockerAuthorizer(docker.WithAuthCreds(creds))))
	pusher, err := docker.NewResolver(docker.ResolverOptions{Hosts: hosts}).Pusher(ctx, name)
	if err != nil {
		return fmt.Errorf("push %s: %w", name, err)
	}
	if err := remotes.PushContent(ctx, pusher, desc, store, nil, platforms.Only(platforms.DefaultSpec()), nil); err != nil {
		return fmt.Errorf("push %s: %w", name, err)
	}
	return nil
}

// platformManifest is desc, or of an index (nested ones too) the first
// manifest for this platform the store holds.
func platformManifest(ctx context.Context, store content.Provider, desc ocispec.Descriptor) (ocispec.Descriptor, error) {
	if !images.IsIndexType(desc.MediaType) {
		return desc, nil
	}
	children, err := images.Children(ctx, store, desc)
	if err != nil {
		return desc, err
	}
	match := platforms.Only(platforms.DefaultSpec())
	for _, ch := range children {
		if ch.Platform != nil && !match.Match(*ch.Platform) {
			continue
		}
		if _, err := content.ReadBlob(ctx, store, ch); err != nil {
			continue // another platform's, not fetched
		}
		if m, err := platformManifest(ctx, store, ch); err == nil && !images.IsIndexType(m.MediaType) {
			return m, nil
		}
	}
	return desc, fmt.Errorf("no manifest for %s in the image", platforms.DefaultString())
}
