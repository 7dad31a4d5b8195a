package builder

import (
	"context"
	"strings"
	"testing"

	"github.com/cornus-dev/cornus/spec"
)

// TestSolveOpt: every build attribute a Compose file writes reaches
// BuildKit's Dockerfile frontend (or its session) as docker buildx sends
// it (issue 24 item 1).
func TestSolveOpt(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"Dockerfile": "FROM scratch\n"})
	named := t.TempDir()
	b := spec.Build{
		Context: dir, Target: "prod", Args: map[string]string{"A": "1"}, Labels: map[string]string{"l": "v"},
		ExtraHosts: map[string][]string{"db": {"10.0.0.2"}, "api": {"10.0.0.3", "10.0.0.4"}}, Network: spec.BuildNetworkNone,
		ShmSize: 1 << 20, NoCache: true, AdditionalContexts: map[string]string{"tools": named, "base": "docker-image://busybox"},
		CacheFrom: []string{"type=local,src=/c", "img:cache"}, CacheTo: []string{"type=inline"},
		Entitlements: []string{spec.EntitlementNetworkHost}, Privileged: true,
		SSH: []spec.BuildSSH{{ID: "default"}}, Secrets: []spec.BuildSecret{{ID: "s", Environment: "TOKEN"}},
	}
	src, err := openSource(context.Background(), LocalFiles{}, b)
	if err != nil {
		t.Fatal(err)
	}
	defer src.cleanup()
	opt, err := solveOpt(job{service: "web", build: b, platform: "linux/amd64"}, src, Options{Args: map[string]string{"B": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"filename": "Dockerfile", "target": "prod", "build-arg:A": "1", "build-arg:B": "2", "label:l": "v",
		"add-hosts": "api=10.0.0.3,api=10.0.0.4,db=10.0.0.2", "force-network-mode": "none", "shm-size": "1048576",
		"no-cache": "", "platform": "linux/amd64", "image-resolve-mode": "local",
		"context:tools": "local:tools", "context:base": "docker-image://busybox",
	} {
		if got, ok := opt.FrontendAttrs[k]; !ok || got != want {
			t.Errorf("frontend attribute %s = %q (set %v), want %q", k, got, ok, want)
		}
	}
	if opt.LocalMounts["tools"] == nil || opt.LocalMounts[localContext] == nil || opt.LocalMounts[localDockerfile] == nil {
		t.Errorf("local mounts: %v", opt.LocalMounts)
	}
	if len(opt.CacheImports) != 2 || opt.CacheImports[0].Type != "local" || opt.CacheImports[0].Attrs["src"] != "/c" ||
		opt.CacheImports[1].Type != "registry" || opt.CacheImports[1].Attrs["ref"] != "img:cache" {
		t.Errorf("cache imports: %+v", opt.CacheImports)
	}
	if len(opt.CacheExports) != 1 || opt.CacheExports[0].Type != "inline" {
		t.Errorf("cache exports: %+v", opt.CacheExports)
	}
	if len(opt.AllowedEntitlements) != 2 {
		t.Errorf("entitlements: %v", opt.AllowedEntitlements)
	}
	if len(opt.Session) != 2 { // secrets and ssh
		t.Errorf("session attachables: %d", len(opt.Session))
	}
	// For a tenant of a server: its own cache mounts and local-source
	// state, and no frontend forwarding.
	tenant, err := solveOpt(job{service: "web", build: b}, src, Options{Tenant: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if got := tenant.FrontendAttrs["build-arg:BUILDKIT_CACHE_MOUNT_NS"]; got != "cornus-tenant/alice" {
		t.Errorf("cache mount namespace: %q", got)
	}
	if _, ok := tenant.FrontendAttrs["cmdline"]; !ok {
		t.Error("a tenant's build may forward to a frontend image")
	}
	if got := tenant.FrontendAttrs["add-hosts"]; !strings.HasSuffix(got, ","+tenantHost("alice")+"=127.0.0.1") {
		t.Errorf("a tenant's RUN steps share other tenants' cache keys: add-hosts %q", got)
	}
	if tenant.SharedKey == opt.SharedKey || tenant.SharedKey == "" {
		t.Errorf("shared keys: a tenant's %q, another's %q", tenant.SharedKey, opt.SharedKey)
	}
	if _, err := cacheEntries([]string{"type=s3,bucket=x"}, "src"); err == nil {
		t.Error("an unsupported cache type was taken")
	}
	if _, err := cacheEntries([]string{"type=local"}, "dest"); err == nil {
		t.Error("a local cache without its directory was taken")
	}
}
