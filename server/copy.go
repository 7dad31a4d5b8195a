package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// maxCopyBody bounds what a compose cp uploads into a service.
const maxCopyBody = 8 << 30

// copyTarget is a compose cp's ?service=, ?index= and ?path=.
func copyTarget(r *http.Request) (engine.CopyOptions, string, error) {
	p := r.URL.Query().Get("path")
	if p == "" {
		return engine.CopyOptions{}, "", fmt.Errorf("%w: cp needs ?service= and ?path=", errdefs.ErrInvalidArgument)
	}
	o, err := serviceTarget(r)
	return o, p, err
}

// serviceTarget is ?service= and ?index=: one service's containers, or
// one of them.
func serviceTarget(r *http.Request) (engine.CopyOptions, error) {
	q := r.URL.Query()
	o := engine.CopyOptions{Service: q.Get("service")}
	if o.Service == "" {
		return o, fmt.Errorf("%w: want ?service=", errdefs.ErrInvalidArgument)
	}
	n, err := replicaIndex(q.Get("index"))
	o.Index = n
	return o, err
}

// replicaIndex reads a replica number from 1 ("" for none: 0).
func replicaIndex(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: index %q: want a replica number from 1", errdefs.ErrInvalidArgument, v)
	}
	return n, nil
}

func pathStat(st backends.PathStat) api.PathStat {
	return api.PathStat{Name: st.Name, Size: st.Size, Mode: st.Mode, Mtime: st.Mtime, LinkTarget: st.LinkTarget}
}

func setPathStat(w http.ResponseWriter, st backends.PathStat) {
	b, _ := json.Marshal(pathStat(st))
	w.Header().Set(api.HeaderPathStat, base64.StdEncoding.EncodeToString(b))
}

// archive is GET /v1/projects/{project}/archive: a tar of a service
// container's path, its stat in a header (with ?stat=1, the stat alone as
// JSON).
func (s *Server) archive(w http.ResponseWriter, r *http.Request, id identity) {
	o, p, err := copyTarget(r)
	if err != nil {
		writeError(w, err)
		return
	}
	project := r.PathValue("project")
	if r.URL.Query().Get("stat") == "1" {
		st, err := s.e.StatPath(r.Context(), project, o, p)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, pathStat(st))
		return
	}
	rc, st, err := s.e.CopyFrom(r.Context(), project, o, p)
	if err != nil {
		writeError(w, err)
		return
	}
	setPathStat(w, st)
	writeTar(w, rc)
}

// writeTar answers with the tar rc streams, and closes it.
func writeTar(w http.ResponseWriter, rc io.ReadCloser) {
	defer rc.Close()
	w.Header().Set("Content-Type", "application/x-tar")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, rc) // the client reads a short tar as an error
}

// archivePut is PUT /v1/projects/{project}/archive: a tar (at most
// maxCopyBody, spooled once) extracted into a directory of each of the
// service's containers the query names.
func (s *Server) archivePut(w http.ResponseWriter, r *http.Request, id identity) {
	o, p, err := copyTarget(r)
	if err != nil {
		writeError(w, err)
		return
	}
	f, err := s.spool(w, r, maxCopyBody, "cp archives")
	if err != nil {
		writeError(w, err)
		return
	}
	defer removeSpooled(f)
	open := func() (io.ReadCloser, error) { return os.Open(f.Name()) }
	if err := s.e.CopyTo(r.Context(), r.PathValue("project"), o, p, open); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
