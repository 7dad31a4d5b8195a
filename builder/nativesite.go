package builder

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/tonistiigi/fsutil"

	"github.com/cornus-dev/cornus/backends"
)

// nativeSite is a runtime's own builder that takes a tar of the context
// (podman's buildah): no BuildKit session, so the Dockerfile and secrets
// travel in the tar, under a directory the build's ignore file hides
// from COPY.
type nativeSite struct {
	native func(ctx context.Context, tar io.Reader, o backends.NativeBuild) (backends.NativeResult, error)
}

// What a tar context carries beside the context's own: the Dockerfile
// under nativeDir, each secret at the top (podman moves a secret out of
// the context by its path, into a directory that has no subdirectories).
const (
	nativeDir    = ".cornus-build"
	nativeSecret = ".cornus-build-secret-"
)

func (s *nativeSite) build(ctx context.Context, j job, src *source, r run) (string, error) {
	b := j.build
	for _, w := range nativeGaps(j) {
		r.display.text(j.service, "WARN "+w+": not supported by this backend's builder (no BuildKit session); ignored")
	}
	df, err := readDockerfile(src)
	if err != nil {
		return "", err
	}
	if r.opts.Tenant != "" {
		if cache, err := hasCacheMount(df); err != nil || cache {
			return "", cmp.Or(err, fmt.Errorf("services.%s.build: RUN --mount=type=cache: this backend's builder shares cache mounts between every build it runs, so on a server one tenant's would be another's; remove the cache mount: %w", j.service, errdefs.ErrPermissionDenied))
		}
	}
	extras := []extraFile{
		{name: nativeDir + "/Dockerfile", data: df},
		// The build's own ignore file was applied here; this one keeps
		// what the tar adds out of COPY . and ADD.
		{name: ".dockerignore", data: []byte(nativeDir + "\n" + nativeSecret + "*\n.dockerignore\n")},
	}
	o := backends.NativeBuild{
		Dockerfile: nativeDir + "/Dockerfile", Tags: j.tags, Args: r.args, Labels: b.Labels, Target: b.Target,
		NoCache: b.NoCache || r.opts.NoCache, Pull: b.Pull || r.opts.Pull, Network: b.Network,
		ExtraHosts: extraHostsColon(b.ExtraHosts), ShmSize: int64(b.ShmSize), Platform: j.platform,
		SecretPaths: map[string]string{},
		Progress:    lineWriter(func(line string) { r.display.text(j.service, line) }),
	}
	store := secretStore{b, src.files}
	for _, sec := range b.Secrets {
		data, err := store.GetSecret(ctx, sec.ID)
		if err != nil {
			return "", err
		}
		path := nativeSecret + sec.ID
		extras = append(extras, extraFile{name: path, data: data})
		o.SecretPaths[sec.ID] = path
	}
	// Only what the Dockerfile reads goes into the tar, as BuildKit would
	// ask for only that (a remote client then sends no more).
	filter := &fsutil.FilterOpt{ExcludePatterns: []string{".dockerignore", nativeDir, nativeSecret + "*"}}
	pats, all, err := contextPaths(df)
	if err != nil {
		return "", err
	}
	if !all {
		pats = append(pats, nativeDir+"-nothing") // when none: a pattern nothing matches
		filter.IncludePatterns = pats
	}
	ctxFS, err := fsutil.NewFilterFS(src.context, filter)
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	go func() { _ = pw.CloseWithError(writeTarContext(ctx, ctxFS, extras, pw)) }()
	res, err := s.native(ctx, pr, o)
	_ = pr.CloseWithError(err)
	if err != nil {
		return "", err
	}
	return res.ID, nil
}

func (s *nativeSite) close() error { return nil }

// nativeGaps names what of j a builder without BuildKit's session cannot
// do.
func nativeGaps(j job) []string {
	b := j.build
	var out []string
	for _, f := range []struct {
		field string
		set   bool
	}{
		{"build.ssh", len(b.SSH) > 0}, {"build.cache_from", len(b.CacheFrom) > 0}, {"build.cache_to", len(b.CacheTo) > 0},
		{"build.additional_contexts", len(b.AdditionalContexts) > 0}, {"build.privileged", b.Privileged},
		{"build.entitlements", len(b.Entitlements) > 0},
	} {
		if f.set {
			out = append(out, fmt.Sprintf("service %q: %s", j.service, f.field))
		}
	}
	return out
}

// extraHostsColon is build.extra_hosts as HOST:IP entries.
func extraHostsColon(h map[string][]string) []string {
	var out []string
	for _, e := range extraHosts(h) {
		name, ip, _ := strings.Cut(e, "=")
		out = append(out, name+":"+ip)
	}
	return slices.Clip(out)
}

// lineWriter calls f with each whole line written to it.
type lineWriter func(string)

func (f lineWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		f(line)
	}
	return len(p), nil
}
