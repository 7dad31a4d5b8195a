package podman

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// imagePath is an image endpoint; podman's routes take the reference
// with its slashes as they are.
func imagePath(ref, verb string) string {
	parts := strings.Split(ref, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/images/" + strings.Join(parts, "/") + "/" + verb
}

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	r, err := b.inspectImage(ctx, ref)
	if err != nil {
		return backends.Image{}, err
	}
	img := backends.Image{
		ID: r.ID, Tags: familiarAll(r.RepoTags), Digests: familiarAll(r.RepoDigests), Size: r.Size,
		Created: realTime(r.Created), Architecture: r.Architecture, OS: r.Os,
		Entrypoint: r.Config.Entrypoint, Cmd: r.Config.Cmd, Env: r.Config.Env, WorkingDir: r.Config.WorkingDir,
		User: r.Config.User, Labels: r.Config.Labels, Healthcheck: specHealthcheck(r.HealthCheck), OnBuild: r.Config.OnBuild,
	}
	for p := range r.Config.ExposedPorts {
		img.ExposedPorts = append(img.ExposedPorts, p)
	}
	slices.Sort(img.ExposedPorts)
	return img, nil
}

func (b *Backend) inspectImage(ctx context.Context, ref string) (imageInspect, error) {
	var r imageInspect
	if err := b.cli.call(ctx, request{method: "GET", path: imagePath(ref, "json")}, &r); err != nil {
		return r, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	return r, nil
}

// ListImages returns every local image.
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	var list []imageSummary
	if err := b.cli.call(ctx, request{method: "GET", path: "/images/json"}, &list); err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]backends.Image, 0, len(list))
	for _, s := range list {
		out = append(out, backends.Image{
			ID: s.ID, Tags: familiarAll(slices.DeleteFunc(slices.Clone(s.RepoTags), func(t string) bool { return t == "<none>:<none>" })),
			Digests: familiarAll(s.RepoDigests), Size: s.Size, Created: unixTime(s.Created), Labels: s.Labels,
		})
	}
	return out, nil
}

// RemoveImage untags and deletes an image.
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	var report struct {
		Errors []string `json:"Errors"`
	}
	q := url.Values{"force": {strconv.FormatBool(force)}}
	if err := b.cli.call(ctx, request{method: "DELETE", path: strings.TrimSuffix(imagePath(ref, ""), "/"), query: q}, &report); err != nil {
		return fmt.Errorf("remove image %s: %w", ref, err)
	}
	if len(report.Errors) > 0 {
		msg := strings.Join(report.Errors, "; ")
		return fmt.Errorf("remove image %s: %s: %w", ref, msg, classify(500, msg))
	}
	return nil
}

// LoadImage imports a docker-archive or OCI-layout tar and returns the
// references it created, as Docker names them ("app:1", not
// "localhost/app:1").
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	var res struct {
		Names []string `json:"Names"`
	}
	r := request{method: "POST", path: "/images/load", body: tar, header: http.Header{"Content-Type": {"application/x-tar"}}}
	if err := b.cli.call(ctx, r, &res); err != nil {
		return nil, fmt.Errorf("load image: %w", err)
	}
	return familiarAll(res.Names), nil
}

// pullLine is one line of the pull stream.
type pullLine struct {
	Stream string   `json:"stream"`
	Error  string   `json:"error"`
	Images []string `json:"images"`
	ID     string   `json:"id"`
}

// PullImage pulls ref from its registry, reporting progress (podman's
// stream has text lines, no byte counts). A reference without a registry
// means Docker Hub, as for Docker; TLS is not verified for loopback
// registries (a local test registry has no certificate).
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	full := qualified(ref)
	q := url.Values{"reference": {full}, "policy": {"always"}}
	if loopbackRegistry(full) {
		q.Set("tlsVerify", "false")
	}
	resp, err := b.cli.do(ctx, request{method: "POST", path: "/images/pull", query: q})
	if err != nil {
		return fmt.Errorf("pull image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	return readImageStream(resp.Body, "pull", ref, progress)
}

// qualified names the registry Docker would: Docker Hub for a reference
// without one (podman would ask its search registries instead).
func qualified(ref string) string {
	first, rest, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return ref
	}
	if !ok {
		return "docker.io/library/" + ref
	}
	return "docker.io/" + first + "/" + rest
}

// loopbackRegistry reports whether a qualified reference's registry is on
// this host.
func loopbackRegistry(ref string) bool {
	host, _, _ := strings.Cut(ref, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func familiarAll(refs []string) []string {
	if refs == nil {
		return nil
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = familiar(r)
	}
	return out
}

// familiar drops the registry podman puts on local and Docker Hub names
// ("localhost/app:1" → "app:1"), as Docker shows them.
func familiar(ref string) string {
	for _, p := range []string{"localhost/", "docker.io/library/", "docker.io/"} {
		if r, ok := strings.CutPrefix(ref, p); ok {
			return r
		}
	}
	return ref
}

// PushImage pushes a local image to its registry with auth alone: the
// login always goes in X-Registry-Auth (empty for none), so the service
// never falls back to its own auth file.
func (b *Backend) PushImage(ctx context.Context, ref string, auth spec.RegistryAuth, progress func(backends.PullProgress)) error {
	full := qualified(ref)
	js, err := json.Marshal(struct {
		Username      string `json:"username,omitempty"`
		Password      string `json:"password,omitempty"`
		IdentityToken string `json:"identitytoken,omitempty"`
	}{auth.Username, auth.Password, auth.IdentityToken})
	if err != nil {
		return err
	}
	q := url.Values{"destination": {full}}
	if loopbackRegistry(full) {
		q.Set("tlsVerify", "false")
	}
	resp, err := b.cli.do(ctx, request{method: "POST", path: "/images/" + full + "/push", query: q,
		header: http.Header{"X-Registry-Auth": {base64.URLEncoding.EncodeToString(js)}}})
	if err != nil {
		return fmt.Errorf("push image %s: %w", ref, err)
	}
	defer resp.Body.Close()
	return readImageStream(resp.Body, "push", ref, progress)
}

// readImageStream reads a pull's or push's answer: JSON lines of text
// (no byte counts) and, on failure, an error line after the 200.
func readImageStream(r io.Reader, verb, ref string, progress func(backends.PullProgress)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	for sc.Scan() {
		var l pullLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue
		}
		if l.Error != "" {
			return fmt.Errorf("%s image %s: %s: %w", verb, ref, l.Error, classify(500, l.Error))
		}
		if progress != nil && strings.TrimSpace(l.Stream) != "" {
			progress(backends.PullProgress{Status: strings.TrimSpace(l.Stream)})
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s image %s: %w", verb, ref, err)
	}
	return nil
}
