package builder

import (
	"fmt"

	"github.com/containerd/errdefs"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// Build args the Dockerfile frontend reads as its own settings.
const (
	argSyntax  = "BUILDKIT_SYNTAX"         // a frontend image to run instead
	argCacheNS = "BUILDKIT_CACHE_MOUNT_NS" // the namespace of cache mount IDs
)

// tenantRules refuses, for a build on behalf of one tenant of a shared
// builder, what CheckImage could not see: a frontend of the build's
// choosing (a # syntax= line or BUILDKIT_SYNTAX runs an image that may
// read any image of the builder's by name) and a cache-mount namespace
// of its own choosing (another tenant's caches); on a builder without
// BuildKit's namespaces, cache mounts at all.
func tenantRules(j job, src *source, args map[string]string) error {
	field := "services." + j.service + ".build"
	for _, a := range []string{argSyntax, argCacheNS} {
		if _, set := args[a]; set {
			return fmt.Errorf("%s.args.%s: a server sets this itself; remove it: %w", field, a, errdefs.ErrPermissionDenied)
		}
	}
	df, err := readDockerfile(src)
	if err != nil {
		return err
	}
	if ref, _, _, ok := parser.DetectSyntax(df); ok {
		return fmt.Errorf("%s: the Dockerfile's syntax directive (# syntax=%s) runs a frontend image of the build's choosing, which on a server could read other tenants' images: remove the line (the server's Dockerfile frontend builds it): %w",
			field, ref, errdefs.ErrPermissionDenied)
	}
	return nil
}

// cacheNamespace keeps a tenant's cache mounts (RUN --mount=type=cache)
// apart from every other tenant's on one BuildKit.
func cacheNamespace(tenant string) string { return "cornus-tenant/" + tenant }
