package dockerapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/containerd/errdefs"
	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"
	"github.com/moby/moby/api/types/image"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
)

func imageSummary(img backends.Image) image.Summary {
	s := image.Summary{ID: img.ID, RepoTags: img.Tags, RepoDigests: img.Digests, Size: img.Size, Created: img.Created.Unix(), Labels: img.Labels, Containers: -1, SharedSize: -1}
	if s.RepoTags == nil {
		s.RepoTags = []string{}
	}
	if s.RepoDigests == nil {
		s.RepoDigests = []string{}
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	return s
}

func imageInspect(img backends.Image) image.InspectResponse {
	cfg := &dockerspec.DockerOCIImageConfig{ImageConfig: ocispec.ImageConfig{
		User: img.User, Env: img.Env, Entrypoint: img.Entrypoint, Cmd: img.Cmd, WorkingDir: img.WorkingDir, Labels: img.Labels,
	}}
	if len(img.ExposedPorts) > 0 {
		cfg.ExposedPorts = map[string]struct{}{}
		for _, p := range img.ExposedPorts {
			cfg.ExposedPorts[p] = struct{}{}
		}
	}
	if h := img.Healthcheck; h != nil {
		cfg.Healthcheck = &dockerspec.HealthcheckConfig{Test: h.Test, Interval: durOf(h.Interval), Timeout: durOf(h.Timeout), StartPeriod: durOf(h.StartPeriod)}
		if h.Retries != nil {
			cfg.Healthcheck.Retries = *h.Retries
		}
	}
	out := image.InspectResponse{
		ID: img.ID, RepoTags: img.Tags, RepoDigests: img.Digests, Created: timeString(img.Created), Config: cfg,
		Architecture: img.Architecture, Os: img.OS, Size: img.Size, RootFS: image.RootFS{Type: "layers"},
	}
	if out.RepoTags == nil {
		out.RepoTags = []string{}
	}
	if out.RepoDigests == nil {
		out.RepoDigests = []string{}
	}
	if out.Os == "" {
		out.Os = "linux"
	}
	return out
}

func (s *Server) imageList(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilters(r.URL.Query().Get("filters"))
	if err != nil {
		writeError(w, err)
		return
	}
	imgs, err := s.imageStore().ListImages(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	out := []image.Summary{}
	for _, img := range imgs {
		if refs := f["reference"]; len(refs) > 0 && !anyMatch(refs, func(pat string) bool { return matchesReference(img.Tags, pat) }) {
			continue
		}
		if ls := f["label"]; len(ls) > 0 && !anyMatch(ls, func(l string) bool {
			k, v, hasV := strings.Cut(l, "=")
			got, ok := img.Labels[k]
			return ok && (!hasV || got == v)
		}) {
			continue
		}
		if d := f["dangling"]; len(d) > 0 && boolValue(d[0]) != (len(img.Tags) == 0) {
			continue
		}
		out = append(out, imageSummary(img))
	}
	writeJSON(w, http.StatusOK, out)
}

// matchesReference implements the reference filter: a glob over
// repository[:tag], where a pattern without a tag matches any tag.
func matchesReference(tags []string, pattern string) bool {
	for _, t := range tags {
		repo, _, _ := strings.Cut(t, "@")
		if ok, _ := path.Match(pattern, repo); ok {
			return true
		}
		if i := strings.LastIndexByte(repo, ':'); i > 0 && !strings.Contains(repo[i:], "/") {
			if ok, _ := path.Match(pattern, repo[:i]); ok {
				return true
			}
		}
	}
	return false
}

// imageGet serves GET /images/{name}/json (names contain slashes).
func (s *Server) imageGet(w http.ResponseWriter, r *http.Request) {
	ref, ok := strings.CutSuffix(r.PathValue("ref"), "/json")
	if !ok {
		s.unknown(w, r)
		return
	}
	img, err := s.imageStore().InspectImage(r.Context(), ref)
	if err != nil {
		if errdefs.IsNotFound(err) {
			err = fmt.Errorf("No such image: %s: %w", ref, errdefs.ErrNotFound)
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, imageInspect(img))
}

func (s *Server) imageDelete(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	img, err := s.imageStore().InspectImage(r.Context(), ref)
	if err == nil {
		err = s.imageStore().RemoveImage(r.Context(), ref, boolValue(r.URL.Query().Get("force")))
	}
	if err != nil {
		if errdefs.IsNotFound(err) {
			err = fmt.Errorf("No such image: %s: %w", ref, errdefs.ErrNotFound)
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, []image.DeleteResponse{{Untagged: ref}, {Deleted: img.ID}})
}

// jsonMessage is one line of the Engine's progress streams (load, pull).
type jsonMessage struct {
	Stream       string          `json:"stream,omitempty"`
	Status       string          `json:"status,omitempty"`
	ID           string          `json:"id,omitempty"`
	Progress     *progressDetail `json:"progressDetail,omitempty"`
	ErrorMessage string          `json:"error,omitempty"`
	ErrorDetail  *errorDetail    `json:"errorDetail,omitempty"`
}

type progressDetail struct {
	Current int64 `json:"current,omitempty"`
	Total   int64 `json:"total,omitempty"`
}

type errorDetail struct {
	Message string `json:"message"`
}

func (s *Server) imageLoad(w http.ResponseWriter, r *http.Request) {
	refs, err := s.imageStore().LoadImage(r.Context(), r.Body)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, ref := range refs {
		_ = enc.Encode(jsonMessage{Stream: "Loaded image: " + ref + "\n"})
	}
}

// imagePull serves POST /images/create?fromImage=X&tag=Y: a pull through
// the backend with the Engine's JSON progress stream. Errors after the
// stream starts are reported in-stream, as dockerd does.
func (s *Server) imagePull(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ref := q.Get("fromImage")
	if ref == "" {
		writeError(w, invalidParam("importing images (fromSrc) is not supported by cornus; use POST /images/load"))
		return
	}
	if tag := q.Get("tag"); tag != "" {
		if strings.HasPrefix(tag, "sha256:") {
			ref += "@" + tag
		} else {
			ref += ":" + tag
		}
	}
	puller, ok := want[backends.Puller](s, w, backends.FeaturePull, "pulling images")
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flush(w)
	enc := json.NewEncoder(flushWriter{w})
	err := puller.PullImage(r.Context(), ref, func(p backends.PullProgress) {
		m := jsonMessage{Status: p.Status, ID: p.ID}
		if p.Total > 0 {
			m.Progress = &progressDetail{Current: p.Current, Total: p.Total}
		}
		_ = enc.Encode(m)
	})
	if err != nil {
		msg := classMessage(err)
		_ = enc.Encode(jsonMessage{ErrorMessage: msg, ErrorDetail: &errorDetail{Message: msg}})
		return
	}
	_ = enc.Encode(jsonMessage{Status: "Status: Image is up to date for " + ref})
}
