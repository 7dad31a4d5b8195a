package server

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// listImages is GET /v1/images: the tenant's images and the operator's
// (images.go's imageOwners), never another tenant's.
func (s *Server) listImages(w http.ResponseWriter, r *http.Request, id identity) {
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "listing images")
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := imgs.ListImages(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	if s.nodesPull() { // and what the registry holds, where the nodes pull
		held, err := s.registryImageList(r.Context(), id.tenant)
		if err != nil {
			writeError(w, err)
			return
		}
		list = append(list, held...)
	}
	out := []backends.Image{}
	for _, img := range list {
		if s.imageOwners.visible(id.tenant, img) {
			if len(img.Tags) > 0 {
				img.Tags = s.imageOwners.visibleTags(id.tenant, img) // not another tenant's names
			}
			out = append(out, img)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// inspectImage is GET /v1/images/inspect?name=REF: the image REF names, if
// the backend has it and the tenant may see it (else 404). A client asks
// before it sends an image the list lacks: on kubernetes without read
// access to nodes the list holds only the images pods use, while the
// nodes may have the one asked for (the operator's, which a load would
// refuse to replace).
func (s *Server) inspectImage(w http.ResponseWriter, r *http.Request, id identity) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeError(w, fmt.Errorf("%w: want ?name=IMAGE", errdefs.ErrInvalidArgument))
		return
	}
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "inspecting images")
	if err != nil {
		writeError(w, err)
		return
	}
	img, err := imgs.InspectImage(r.Context(), name)
	if err == nil && !s.imageOwners.visible(id.tenant, img) {
		err = fmt.Errorf("%w: image %s", errdefs.ErrNotFound, name)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	img.Tags = s.imageOwners.visibleTags(id.tenant, img)
	writeJSON(w, http.StatusOK, img)
}

// loadImage is POST /v1/images/load: a docker-archive or OCI layout tar
// into the backend's store (cornus image load --server; no registry
// needed). The body is bounded and must keep moving. It is spooled to
// the server's disk first, so its names are checked before the store
// sees it: a tenant may write its own tags and new ones, never another
// tenant's, the operator's or cornus's own.
func (s *Server) loadImage(w http.ResponseWriter, r *http.Request, id identity) {
	if s.nodesPull() {
		s.loadIntoRegistry(w, r, id)
		return
	}
	imgs, err := backends.Want[backends.Images](s.b, backends.FeatureImages, "loading images")
	if err != nil {
		writeError(w, err)
		return
	}
	f, names, ids, err := s.spoolArchive(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer removeSpooled(f)
	for _, n := range names {
		if err := s.mayTag(r, id.tenant, imgs, n, ids); err != nil {
			writeError(w, err)
			return
		}
	}
	if err := s.imageOwners.claim(id.tenant, names); err != nil {
		writeError(w, err)
		return
	}
	refs, err := imgs.LoadImage(r.Context(), f)
	if err != nil {
		writeError(w, err)
		return
	}
	for _, ref := range refs {
		if img, err := imgs.InspectImage(r.Context(), ref); err == nil {
			ids = append(ids, img.ID)
		}
	}
	if err := s.imageOwners.record(id.tenant, append(names, refs...), ids); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, refs)
}

// mayTag refuses a name tenant may not write: cornus's own, another
// tenant's, or one the store holds that is not the tenant's (the
// operator's images are shared read-only), unless the archive brings the
// very same image.
func (s *Server) mayTag(r *http.Request, tenant string, imgs backends.Images, name string, ids []string) error {
	if reserved(name) {
		return fmt.Errorf("%w: image %s: %s is cornus's own repository (the caretaker image): load it under another name", errdefs.ErrPermissionDenied, name, name)
	}
	owner := s.imageOwners.tagOwner(name)
	if owner == tenant {
		return nil
	}
	if owner != "" {
		return fmt.Errorf("%w: image %s is another tenant's: load it under another name", errdefs.ErrPermissionDenied, name)
	}
	img, err := imgs.InspectImage(r.Context(), name)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	for _, id := range ids {
		if imageKey(id) == imageKey(img.ID) {
			return nil // the same image again
		}
	}
	return fmt.Errorf("%w: image %s is on this server already and is not yours (it is shared with every tenant): load yours under another name", errdefs.ErrPermissionDenied, name)
}

// spoolArchive spools an image archive (spool) and reads the names and
// image IDs it holds (archiveImages); removeSpooled removes it.
func (s *Server) spoolArchive(w http.ResponseWriter, r *http.Request) (f *os.File, names, ids []string, err error) {
	if f, err = s.spool(w, r, maxImageBody, "image archives"); err != nil {
		return nil, nil, nil, err
	}
	if names, ids, err = archiveImages(f); err != nil {
		removeSpooled(f)
		return nil, nil, nil, err
	}
	return f, names, ids, nil
}

func removeSpooled(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// spool writes the request body to a private file under the server's
// state, bounded by limit (what names the body in the error), with a
// read deadline bumped whenever bytes arrive.
func (s *Server) spool(w http.ResponseWriter, r *http.Request, limit int64, what string) (*os.File, error) {
	dir := filepath.Join(s.cfg.DataDir, "server", "uploads")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "upload-*.tar")
	if err != nil {
		return nil, err
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadLimit))
	_, err = io.Copy(f, &deadlineReader{r: body, bump: func() { _ = rc.SetReadDeadline(time.Now().Add(bodyReadLimit)) }})
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		if _, ok := err.(*http.MaxBytesError); ok {
			err = fmt.Errorf("%w: %s are limited to %d bytes", errdefs.ErrOutOfRange, what, limit)
		}
		return nil, err
	}
	return f, nil
}

type deadlineReader struct {
	r    interface{ Read([]byte) (int, error) }
	bump func()
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.bump()
	}
	return n, err
}
