package dockerapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/cornus-dev/cornus/backends"
)

// maxCommitConfig bounds the config body a commit may carry.
const maxCommitConfig = 1 << 20

// containerExport serves GET /containers/{id}/export: a tar of the
// container's filesystem (docker export).
func (s *Server) containerExport(w http.ResponseWriter, r *http.Request) {
	ex, ok := want[backends.Exporter](s, w, backends.FeatureExport, "export")
	if !ok {
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	rc, err := ex.Export(r.Context(), d.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/x-tar")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, rc)
}

// commit serves POST /commit?container=&repo=&tag=&author=&comment=
// &changes=&pause= (docker commit). A container config in the body
// (the API's way to replace the image's config wholesale) is refused:
// --change instructions say the same and are what the CLI sends.
func (s *Server) commit(w http.ResponseWriter, r *http.Request) {
	cm, ok := want[backends.Committer](s, w, backends.FeatureCommit, "commit")
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCommitConfig))
	if err != nil {
		writeError(w, err)
		return
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && !bytes.Equal(b, []byte("null")) && !bytes.Equal(b, []byte("{}")) {
		writeError(w, invalidParam("a container config in the commit body is not supported by cornus: give the changes as changes= (docker commit --change)"))
		return
	}
	q := r.URL.Query()
	d, err := s.container(r.Context(), q.Get("container"))
	if err != nil {
		writeError(w, err)
		return
	}
	o := backends.CommitOptions{Author: q.Get("author"), Message: q.Get("comment"), Changes: q["changes"], NoPause: q.Get("pause") != "" && !isTrue(q.Get("pause"))}
	if repo := q.Get("repo"); repo != "" {
		o.Reference = repo
		if tag := q.Get("tag"); tag != "" {
			o.Reference += ":" + tag
		}
	}
	id, err := cm.Commit(r.Context(), d.ID, o)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"Id": id})
}
