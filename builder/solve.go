package builder

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/tonistiigi/fsutil"

	"github.com/cornus-dev/cornus/spec"
)

// job is one image to build.
type job struct {
	service  string
	build    spec.Build
	tags     []string // the App's image first, then build.tags
	platform string   // the App's platform, when set
	deps     []string // services whose images it uses as contexts
}

// solveOpt is the BuildKit solve for j: the Dockerfile frontend's
// attributes, the client-side sources and the session's attachables. It
// does no I/O beyond opening the sources; the caller closes them.
func solveOpt(j job, src *source, o Options) (bkclient.SolveOpt, error) {
	b := j.build
	attrs := map[string]string{"filename": src.filename}
	if b.Target != "" {
		attrs["target"] = b.Target
	}
	for k, v := range buildArgs(b, o) {
		attrs["build-arg:"+k] = v
	}
	for k, v := range b.Labels {
		attrs["label:"+k] = v
	}
	if o.Tenant != "" {
		attrs["build-arg:"+argCacheNS] = cacheNamespace(o.Tenant)
		// What the frontend sets when it forwards to another: a second
		// guard, beside tenantRules, that it runs no frontend image.
		attrs["cmdline"] = ""
	}
	if b.NoCache || o.NoCache {
		attrs["no-cache"] = ""
	}
	// Bases the builder's store has are used as they are (docker build's
	// default: nothing is pulled that is there), unless asked to pull.
	attrs["image-resolve-mode"] = "local"
	if b.Pull || o.Pull {
		attrs["image-resolve-mode"] = "pull"
	}
	if p := j.platform; p != "" {
		attrs["platform"] = p
	}
	hs := extraHosts(b.ExtraHosts)
	if o.Tenant != "" {
		// Every RUN step's definition (its cache key) then names the
		// tenant: a step's cached result, which may hold what a secret
		// mount gave it, is never another tenant's cache hit.
		hs = append(hs, tenantHost(o.Tenant)+"=127.0.0.1")
	}
	if len(hs) > 0 {
		attrs["add-hosts"] = strings.Join(hs, ",")
	}
	if b.Network == spec.BuildNetworkNone || b.Network == spec.BuildNetworkHost {
		attrs["force-network-mode"] = b.Network
	}
	if b.ShmSize > 0 {
		attrs["shm-size"] = strconv.FormatInt(int64(b.ShmSize), 10)
	}
	opt := bkclient.SolveOpt{
		Frontend:      "dockerfile.v0",
		FrontendAttrs: attrs,
		SharedKey:     sharedKey(o.Tenant, b.Context),
		LocalMounts:   map[string]fsutil.FS{localContext: src.context, localDockerfile: src.dockerfile},
		Session:       []session.Attachable{secretsprovider.NewSecretProvider(secretStore{b, src.files})},
	}
	for name, fs := range src.named {
		opt.LocalMounts[name] = fs
		attrs["context:"+name] = "local:" + name
	}
	for name, ref := range src.refs {
		attrs["context:"+name] = ref
	}
	opt.OCIStores = src.stores
	if len(b.SSH) > 0 {
		opt.Session = append(opt.Session, agents{b.SSH, src.files})
	}
	var err error
	if opt.CacheImports, err = cacheEntries(b.CacheFrom, "src"); err != nil {
		return opt, fmt.Errorf("cache_from: %w", err)
	}
	if opt.CacheExports, err = cacheEntries(b.CacheTo, "dest"); err != nil {
		return opt, fmt.Errorf("cache_to: %w", err)
	}
	opt.AllowedEntitlements = entitlements(b)
	return opt, nil
}

// buildArgs are b's args with the run's overrides (--build-arg).
func buildArgs(b spec.Build, o Options) map[string]string {
	args := maps.Clone(b.Args)
	if args == nil {
		args = map[string]string{}
	}
	maps.Copy(args, o.Args)
	return args
}

// extraHosts is build.extra_hosts as BuildKit's add-hosts list.
func extraHosts(h map[string][]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, ip := range h[name] {
			out = append(out, name+"="+ip)
		}
	}
	return out
}

// entitlements are what b asks BuildKit to allow (host power, checked by
// the caller against the host policy before any build starts).
func entitlements(b spec.Build) []string {
	var out []string
	add := func(e string) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	for _, e := range b.Entitlements {
		add(e)
	}
	if b.Privileged {
		add(spec.EntitlementSecurityInsecure)
	}
	if b.Network == spec.BuildNetworkHost {
		add(spec.EntitlementNetworkHost)
	}
	return out
}

// cacheEntries parses docker buildx's cache specs: "type=local,src=DIR",
// "type=inline", or a bare image reference (a registry cache). pathKey is
// the local type's directory attribute ("src" to import, "dest" to
// export).
func cacheEntries(specs []string, pathKey string) ([]bkclient.CacheOptionsEntry, error) {
	var out []bkclient.CacheOptionsEntry
	for _, s := range specs {
		if !strings.Contains(s, "=") {
			out = append(out, bkclient.CacheOptionsEntry{Type: "registry", Attrs: map[string]string{"ref": s}})
			continue
		}
		fields, err := csv.NewReader(strings.NewReader(s)).Read()
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		e := bkclient.CacheOptionsEntry{Attrs: map[string]string{}}
		for _, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("%q: %q is not KEY=VALUE", s, f)
			}
			if k == "type" {
				e.Type = v
			} else {
				e.Attrs[k] = v
			}
		}
		switch e.Type {
		case "local":
			if e.Attrs[pathKey] == "" {
				return nil, fmt.Errorf("%q: a local cache needs %s=DIR", s, pathKey)
			}
		case "inline", "registry":
		case "":
			return nil, fmt.Errorf("%q: name the cache's type (type=local, type=inline or type=registry)", s)
		default:
			return nil, fmt.Errorf("%q: cache type %q is not supported: use local, inline or registry", s, e.Type)
		}
		out = append(out, e)
	}
	return out, nil
}

// LocalCaches are b's cache_from and cache_to entries of type local: a
// directory of the machine the build runs from, which a server (or a
// daemon serving other users) must not read or write on a client's
// behalf.
func LocalCaches(b spec.Build) []string {
	var out []string
	for _, l := range []struct {
		specs   []string
		pathKey string
	}{{b.CacheFrom, "src"}, {b.CacheTo, "dest"}} {
		for _, c := range l.specs {
			if es, err := cacheEntries([]string{c}, l.pathKey); err != nil || es[0].Type == "local" {
				out = append(out, c) // an entry that does not parse is not taken either
			}
		}
	}
	return out
}

// secretStore answers a build's secret requests from the client's files
// and environment (Files), read when the build asks and never stored.
type secretStore struct {
	build spec.Build
	files Files
}

func (s secretStore) GetSecret(ctx context.Context, id string) ([]byte, error) {
	sec, err := buildSecret(s.build, id)
	if err != nil {
		return nil, err
	}
	return s.files.Secret(ctx, sec)
}

// tenantHost is the host name a tenant's RUN steps resolve (to
// localhost), which keeps their cache keys apart from other tenants'.
func tenantHost(tenant string) string {
	h := sha256.Sum256([]byte("cornus-tenant\x00" + tenant))
	return "cornus-tenant-" + hex.EncodeToString(h[:6])
}

// sharedKey names what BuildKit keeps of a build's local sources between
// builds (the last copy of a context, sent again as a diff): one per
// tenant and context directory, so no build's diff is taken against
// another tenant's files.
func sharedKey(tenant, context string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + context))
	return hex.EncodeToString(h[:16])
}
