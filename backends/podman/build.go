package podman

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cornus-dev/cornus/backends"
)

var _ backends.Builder = (*Backend)(nil)

// BuildSite is podman's own builder (buildah, behind libpod's build
// endpoint): it takes a tar of the context and stores the result in
// podman's image store. It has no BuildKit session.
func (b *Backend) BuildSite(context.Context) (backends.BuildSite, error) {
	return backends.BuildSite{Native: b.buildNative}, nil
}

// buildLine is one line of libpod's build stream.
type buildLine struct {
	Stream string `json:"stream"`
	Error  string `json:"error"`
}

// imageIDLine is the line libpod's stream ends a build with: the ID.
var imageIDLine = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (b *Backend) buildNative(ctx context.Context, tar io.Reader, o backends.NativeBuild) (backends.NativeResult, error) {
	q, err := buildQuery(o)
	if err != nil {
		return backends.NativeResult{}, err
	}
	release, err := b.guard(ctx, classBuild)
	if err != nil {
		return backends.NativeResult{}, fmt.Errorf("build: %w", err)
	}
	defer release()
	r := request{method: "POST", path: "/build", query: q, body: tar, header: http.Header{"Content-Type": {"application/x-tar"}}}
	resp, err := b.cli.do(ctx, r)
	if err != nil {
		return backends.NativeResult{}, fmt.Errorf("build: %w", err)
	}
	defer resp.Body.Close()
	var id string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	for sc.Scan() {
		var l buildLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue
		}
		if l.Error != "" {
			return backends.NativeResult{}, fmt.Errorf("build: %s: %w", strings.TrimSpace(l.Error), classify(500, l.Error))
		}
		text := strings.TrimRight(l.Stream, "\n")
		if imageIDLine.MatchString(text) {
			id = "sha256:" + text
			continue
		}
		if text != "" && o.Progress != nil {
			_, _ = io.WriteString(o.Progress, text+"\n")
		}
	}
	if err := sc.Err(); err != nil {
		return backends.NativeResult{}, fmt.Errorf("build: %w", err)
	}
	if id == "" {
		return backends.NativeResult{}, fmt.Errorf("build: podman's stream ended without the image's ID")
	}
	return backends.NativeResult{ID: id}, nil
}

// buildQuery is libpod's build query for o.
func buildQuery(o backends.NativeBuild) (url.Values, error) {
	tags := make([]string, len(o.Tags))
	for i, t := range o.Tags {
		tags[i] = qualified(t) // Docker's names: podman's own would be localhost/NAME
	}
	// The OCI format, as podman's CLI asks: with the API's default
	// (docker) podman 4.3 finds no layer in its cache.
	q := url.Values{"dockerfile": {o.Dockerfile}, "t": tags, "layers": {"true"}, "rm": {"true"},
		"outputformat": {"application/vnd.oci.image.manifest.v1+json"}}
	for k, v := range map[string]any{"buildargs": o.Args, "labels": o.Labels, "extrahosts": o.ExtraHosts, "secrets": secretSpecs(o.SecretPaths)} {
		if reflectEmpty(v) {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		q.Set(k, string(data))
	}
	if o.Target != "" {
		q.Set("target", o.Target)
	}
	if o.NoCache {
		q.Set("nocache", "true")
	}
	if o.Pull {
		q.Set("pullpolicy", "always")
	} else {
		q.Set("pullpolicy", "missing") // the store's image, as docker build does
	}
	// libpod takes buildah's own terms here: OCI isolation (1), the
	// network policy as a number (0 default, 1 none, 2 host) and the
	// namespaces; with no namespace options at all podman 4.3 runs RUN
	// steps in the host's network, whatever the policy says.
	q.Set("isolation", "1")
	policy, hostNet := "0", false
	switch o.Network {
	case "none":
		policy = "1"
	case "host":
		policy, hostNet = "2", true
	}
	q.Set("networkmode", policy)
	ns, _ := json.Marshal([]struct {
		Name string
		Host bool
	}{{"network", hostNet}})
	q.Set("nsoptions", string(ns))
	if o.ShmSize > 0 {
		q.Set("shmsize", strconv.FormatInt(o.ShmSize, 10))
	}
	if o.Platform != "" {
		q.Set("platform", o.Platform)
	}
	return q, nil
}

// secretSpecs are the tar's secret files as libpod names them.
func secretSpecs(paths map[string]string) []string {
	var out []string
	for id, p := range paths {
		out = append(out, "id="+id+",src="+p)
	}
	slices.Sort(out)
	return out
}

func reflectEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]string:
		return len(v) == 0
	case []string:
		return len(v) == 0
	}
	return v == nil
}
