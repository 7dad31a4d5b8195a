package dockerapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/spec"
)

// imageBuild serves POST /build, the classic build a client without
// docker buildx sends (docker build, docker compose's classic builder, the
// devcontainer CLI): the context as a tar in the body, the options in the
// query. It builds with the backend's builder (builder package) wherever
// the backend keeps images, and answers with the Engine's JSON stream:
// the build's progress as text lines, then the image's ID in an aux
// message. Host power in the options is refused by the host policy.
func (s *Server) imageBuild(w http.ResponseWriter, r *http.Request) {
	if s.build == nil {
		writeError(w, fmt.Errorf("POST /build: this server builds no images (it was started without a builder): %w", errdefs.ErrNotImplemented))
		return
	}
	q := r.URL.Query()
	if q.Get("remote") != "" {
		writeError(w, fmt.Errorf("POST /build: remote contexts (a URL) are not supported by cornus; send the context: %w", errdefs.ErrNotImplemented))
		return
	}
	b, tags, err := buildOptions(q)
	if err == nil {
		err = builder.Check(s.policy, "build", b) // before a byte is read or streamed
	}
	if err != nil {
		writeError(w, err)
		return
	}
	dir, err := os.MkdirTemp("", "cornus-build-context-")
	if err != nil {
		writeError(w, err)
		return
	}
	defer os.RemoveAll(dir)
	if err := builder.ExtractContext(r.Body, dir); err != nil {
		writeError(w, invalidParam("%v", err))
		return
	}
	b.Context = dir
	if b.Dockerfile, err = insideContext(dir, b.Dockerfile); err != nil {
		writeError(w, invalidParam("dockerfile: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flush(w)
	enc := json.NewEncoder(flushWriter{w})
	progress := "plain"
	if q.Get("q") == "1" || q.Get("q") == "true" {
		progress = "quiet"
	}
	res, err := s.build.BuildOne(r.Context(), "build", b, tags, q.Get("platform"), builder.Options{
		NoCache: b.NoCache, Pull: b.Pull, Progress: progress, Out: streamLines{enc}, Policy: s.policy,
	})
	if err != nil {
		// The stream has begun: the error goes in-stream, as dockerd's.
		_ = enc.Encode(jsonMessage{ErrorMessage: err.Error(), ErrorDetail: &errorDetail{Message: err.Error()}})
		return
	}
	_ = enc.Encode(struct {
		Aux struct {
			ID string `json:"ID"`
		} `json:"aux"`
	}{Aux: struct {
		ID string `json:"ID"`
	}{ID: res.ID}})
	if progress != "quiet" {
		_ = enc.Encode(jsonMessage{Stream: "Successfully built " + shortID(res.ID) + "\n"})
		for _, t := range tags {
			_ = enc.Encode(jsonMessage{Stream: "Successfully tagged " + t + "\n"})
		}
	}
}

// buildOptions reads POST /build's query into a build section and the
// image's names.
func buildOptions(q map[string][]string) (spec.Build, []string, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	b := spec.Build{Dockerfile: get("dockerfile"), Target: get("target"), NoCache: isTrue(get("nocache")), Pull: get("pull") != "" && get("pull") != "0" && get("pull") != "false"}
	if b.Dockerfile != "" && (filepath.IsAbs(b.Dockerfile) || strings.HasPrefix(filepath.Clean(b.Dockerfile), "..")) {
		return b, nil, invalidParam("dockerfile must be a path inside the context")
	}
	for key, into := range map[string]*map[string]string{"buildargs": &b.Args, "labels": &b.Labels} {
		if err := decodeNullable(get(key), into); err != nil {
			return b, nil, invalidParam("%s: %v", key, err)
		}
	}
	switch nm := get("networkmode"); nm {
	case "", "default", "bridge":
	case spec.BuildNetworkHost, spec.BuildNetworkNone:
		b.Network = nm
	default:
		return b, nil, invalidParam("networkmode %q: use default, host or none", nm)
	}
	for _, h := range q["extrahosts"] {
		name, ip, ok := strings.Cut(h, ":")
		if !ok {
			return b, nil, invalidParam("extrahosts %q: want HOST:IP", h)
		}
		if b.ExtraHosts == nil {
			b.ExtraHosts = map[string][]string{}
		}
		b.ExtraHosts[name] = append(b.ExtraHosts[name], ip)
	}
	if v := get("shmsize"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return b, nil, invalidParam("shmsize %q", v)
		}
		b.ShmSize = spec.Bytes(n)
	}
	if v := get("cachefrom"); v != "" {
		if err := json.Unmarshal([]byte(v), &b.CacheFrom); err != nil {
			return b, nil, invalidParam("cachefrom: %v", err)
		}
		// A directory would be read by this daemon, as itself.
		if local := builder.LocalCaches(b); len(local) > 0 {
			return b, nil, invalidParam("cachefrom %q: a local cache is a directory of the daemon's; name an image (or an inline cache's)", local[0])
		}
	}
	return b, q["t"], nil
}

// insideContext is the Dockerfile's path with its directory resolved in
// the extracted context dir: a symlink the context holds must not lead
// the builder to a directory of this machine's ("" stays "").
func insideContext(dir, dockerfile string) (string, error) {
	if dockerfile == "" {
		return "", nil
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	sub, err := filepath.EvalSymlinks(filepath.Join(realDir, filepath.Dir(dockerfile)))
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(realDir, sub); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s leaves the context (through a symlink)", dockerfile)
	}
	return filepath.Join(sub, filepath.Base(dockerfile)), nil
}

// decodeNullable reads a JSON object whose values may be null (an unset
// build arg), dropping those.
func decodeNullable(raw string, into *map[string]string) error {
	if raw == "" {
		return nil
	}
	var m map[string]*string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return err
	}
	for k, v := range m {
		if v == nil {
			continue
		}
		if *into == nil {
			*into = map[string]string{}
		}
		(*into)[k] = *v
	}
	return nil
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// streamLines turns the build's text progress into the Engine's stream
// messages, a line each.
type streamLines struct{ enc *json.Encoder }

func (s streamLines) Write(p []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line != "" {
			if err := s.enc.Encode(jsonMessage{Stream: line}); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}
