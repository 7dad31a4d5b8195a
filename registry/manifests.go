package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/opencontainers/go-digest"
)

// manifestFields are the parts of an image manifest or index the
// registry reads.
type manifestFields struct {
	MediaType    string            `json:"mediaType"`
	ArtifactType string            `json:"artifactType"`
	Config       *descriptor       `json:"config"`
	Layers       []descriptor      `json:"layers"`
	Manifests    []descriptor      `json:"manifests"`
	Subject      *descriptor       `json:"subject"`
	Annotations  map[string]string `json:"annotations"`
}

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       digest.Digest     `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// manifests serves /v2/NAME/manifests/REF.
func (h *Handler) manifests(q *request, ref string) {
	if _, isDigest := parseDigest(ref); !isDigest && !tagRE.MatchString(ref) {
		code := codeManifestInvalid
		if strings.Contains(ref, ":") {
			code = codeDigestInvalid
		}
		writeError(q.w, http.StatusBadRequest, code, fmt.Sprintf("%q is neither a tag nor a digest", ref))
		return
	}
	switch q.r.Method {
	case http.MethodGet, http.MethodHead:
		if h.authorize(q, Pull) {
			h.getManifest(q, ref)
		}
	case http.MethodPut:
		if h.authorize(q, Push) {
			h.putManifest(q, ref)
		}
	case http.MethodDelete:
		if h.authorize(q, Delete) {
			h.deleteManifest(q, ref)
		}
	default:
		methodNotAllowed(q.w)
	}
}

func (h *Handler) getManifest(q *request, ref string) {
	m, err := h.cfg.Store.Manifest(q.r.Context(), q.repo, ref)
	if failed(q.w, err, codeManifestUnknown, fmt.Sprintf("manifest %s not found in %s", ref, q.repo)) {
		return
	}
	hdr := q.w.Header()
	hdr.Set("Content-Type", m.MediaType)
	hdr.Set("Docker-Content-Digest", m.Digest.String())
	hdr.Set("ETag", `"`+m.Digest.String()+`"`)
	hdr.Set("Content-Length", itoa(int64(len(m.Data))))
	q.w.WriteHeader(http.StatusOK)
	if q.r.Method == http.MethodGet {
		_, _ = q.w.Write(m.Data)
	}
}

func (h *Handler) putManifest(q *request, ref string) {
	data, err := io.ReadAll(io.LimitReader(q.r.Body, h.cfg.MaxManifest+1))
	if err != nil {
		writeError(q.w, http.StatusBadRequest, codeManifestInvalid, "reading the manifest: "+err.Error())
		return
	}
	if int64(len(data)) > h.cfg.MaxManifest {
		writeError(q.w, http.StatusRequestEntityTooLarge, codeSizeInvalid, fmt.Sprintf("a manifest is at most %d bytes", h.cfg.MaxManifest))
		return
	}
	var f manifestFields
	if err := json.Unmarshal(data, &f); err != nil {
		writeError(q.w, http.StatusBadRequest, codeManifestInvalid, "the manifest is not JSON: "+err.Error())
		return
	}
	mt := q.r.Header.Get("Content-Type")
	if mt == "" {
		mt = f.MediaType
	}
	if f.MediaType != "" && mt != f.MediaType {
		writeError(q.w, http.StatusBadRequest, codeManifestInvalid, fmt.Sprintf("Content-Type %s is not the manifest's mediaType %s", mt, f.MediaType))
		return
	}
	if mt == "" {
		writeError(q.w, http.StatusBadRequest, codeManifestInvalid, "the manifest has no media type (Content-Type or mediaType)")
		return
	}
	d, tags := digest.Canonical.FromBytes(data), []string{ref}
	want, byDigest := parseDigest(ref)
	if byDigest {
		if d = want.Algorithm().FromBytes(data); d != want {
			writeError(q.w, http.StatusBadRequest, codeDigestInvalid, "the manifest's bytes are not "+ref)
			return
		}
		// A push by digest may tag it too (?tag=, distribution-spec 1.1).
		tags = q.r.URL.Query()["tag"]
		for _, t := range tags {
			if !tagRE.MatchString(t) {
				writeError(q.w, http.StatusBadRequest, codeManifestInvalid, fmt.Sprintf("tag %q is not valid", t))
				return
			}
		}
	}
	if missing := h.missing(q, f); missing != "" {
		writeError(q.w, http.StatusBadRequest, codeManifestBlobUnknown, "the manifest names "+missing+", which "+q.repo+" does not have")
		return
	}
	m := Manifest{MediaType: mt, Digest: d, Data: data}
	if h.cfg.AdmitManifest != nil {
		if err := h.cfg.AdmitManifest(q.r.Context(), q.principal, q.repo, m); err != nil {
			writeError(q.w, http.StatusForbidden, codeDenied, err.Error())
			return
		}
	}
	if err := h.cfg.Store.PutManifest(q.r.Context(), q.repo, m, tags...); err != nil {
		storeError(q.w, err)
		return
	}
	hdr := q.w.Header()
	if byDigest {
		for _, t := range tags {
			hdr.Add("OCI-Tag", t)
		}
	}
	if f.Subject != nil {
		hdr.Set("OCI-Subject", f.Subject.Digest.String())
	}
	hdr.Set("Location", "/v2/"+q.repo+"/manifests/"+d.String())
	hdr.Set("Docker-Content-Digest", d.String())
	hdr.Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusCreated)
}

// missing names the first blob or manifest f references that the
// repository lacks ("" for none). Layers a registry must not hold
// (non-distributable, foreign) may be absent; a subject may be too.
func (h *Handler) missing(q *request, f manifestFields) string {
	ctx := q.r.Context()
	blobs := f.Layers
	if f.Config != nil {
		blobs = append([]descriptor{*f.Config}, blobs...)
	}
	for _, b := range blobs {
		if strings.Contains(b.MediaType, "nondistributable") || strings.Contains(b.MediaType, "foreign") {
			continue
		}
		if _, err := h.cfg.Store.Blob(ctx, q.repo, b.Digest); err != nil {
			return "blob " + b.Digest.String()
		}
	}
	for _, m := range f.Manifests {
		if _, err := h.cfg.Store.Manifest(ctx, q.repo, m.Digest.String()); err != nil {
			return "manifest " + m.Digest.String()
		}
	}
	return ""
}

func (h *Handler) deleteManifest(q *request, ref string) {
	var err error
	if d, ok := parseDigest(ref); ok {
		err = h.cfg.Store.DeleteManifest(q.r.Context(), q.repo, d)
	} else {
		err = h.cfg.Store.DeleteTag(q.r.Context(), q.repo, ref)
	}
	if failed(q.w, err, codeManifestUnknown, fmt.Sprintf("manifest %s not found in %s", ref, q.repo)) {
		return
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusAccepted)
}

// referrers serves /v2/NAME/referrers/DIGEST: an index of the
// repository's manifests whose subject is DIGEST, filtered by
// ?artifactType=.
func (h *Handler) referrers(q *request, arg string) {
	d, ok := parseDigest(arg)
	if !ok {
		writeError(q.w, http.StatusBadRequest, codeDigestInvalid, "invalid digest "+arg)
		return
	}
	if q.r.Method != http.MethodGet {
		methodNotAllowed(q.w)
		return
	}
	if !h.authorize(q, Pull) {
		return
	}
	ctx := q.r.Context()
	ds, err := h.cfg.Store.Manifests(ctx, q.repo)
	if err != nil {
		serverError(q.w, err)
		return
	}
	want := q.r.URL.Query().Get("artifactType")
	out := []descriptor{}
	for _, md := range ds {
		m, err := h.cfg.Store.Manifest(ctx, q.repo, md.String())
		if err != nil {
			continue // deleted meanwhile
		}
		var f manifestFields
		if json.Unmarshal(m.Data, &f) != nil || f.Subject == nil || f.Subject.Digest != d {
			continue
		}
		at := f.ArtifactType
		if at == "" && f.Config != nil {
			at = f.Config.MediaType
		}
		if want != "" && at != want {
			continue
		}
		out = append(out, descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: int64(len(m.Data)), ArtifactType: at, Annotations: f.Annotations})
	}
	if want != "" {
		q.w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	var body bytes.Buffer
	_ = json.NewEncoder(&body).Encode(struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}{2, "application/vnd.oci.image.index.v1+json", out})
	q.w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
	_, _ = q.w.Write(body.Bytes())
}
