package dockerapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/dockerapi/createbody"
)

// container resolves a reference (ID, ID prefix or name) to a container.
func (s *Server) container(ctx context.Context, ref string) (backends.ContainerDetails, error) {
	d, err := s.cache.inspectRef(ctx, ref)
	if err == nil {
		return d, nil
	}
	if !errdefs.IsNotFound(err) {
		return d, err
	}
	cs, lerr := s.cache.listAll(ctx)
	if lerr != nil {
		return d, lerr
	}
	name := strings.TrimPrefix(ref, "/")
	var match []backends.Container
	for _, c := range cs {
		if c.Name == name || c.ID == ref {
			return s.cache.inspectRef(ctx, c.ID)
		}
		if strings.HasPrefix(c.ID, ref) {
			match = append(match, c)
		}
	}
	if len(match) == 1 {
		return s.cache.inspectRef(ctx, match[0].ID)
	}
	if len(match) > 1 {
		return d, invalidParam("multiple IDs found with provided prefix: %s", ref)
	}
	return d, noSuchContainer(ref)
}

func (s *Server) containerInspect(w http.ResponseWriter, r *http.Request) {
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, inspect(d, s.isAutoRemove(d.ID)))
}

func (s *Server) containerList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := parseFilters(q.Get("filters"))
	if err != nil {
		writeError(w, err)
		return
	}
	all := boolValue(q.Get("all"))
	// Filters on state include stopped containers, as dockerd does.
	if len(f["status"]) > 0 || len(f["exited"]) > 0 {
		all = true
	}
	cs, err := s.cache.listAll(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	out := []container.Summary{}
	for _, c := range cs {
		if !all && !c.Running() {
			continue
		}
		ok, err := matchContainer(c, f)
		if err != nil {
			writeError(w, err)
			return
		}
		if ok {
			out = append(out, summary(c))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created > out[j].Created })
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 && n < len(out) {
		out = out[:n]
	}
	writeJSON(w, http.StatusOK, out)
}

// matchContainer applies the container filters dockerd supports that the
// backend's label query does not.
func matchContainer(c backends.Container, f filters) (bool, error) {
	for _, l := range f["label"] {
		k, v, hasV := strings.Cut(l, "=")
		got, ok := c.Labels[k]
		if !ok || (hasV && got != v) {
			return false, nil
		}
	}
	for _, pat := range f["name"] {
		re, err := regexp.Compile(pat)
		if err != nil {
			return false, invalidParam("invalid name filter %q: %v", pat, err)
		}
		if !re.MatchString("/"+c.Name) && !re.MatchString(c.Name) {
			return false, nil
		}
	}
	if ids := f["id"]; len(ids) > 0 && !anyMatch(ids, func(id string) bool { return strings.HasPrefix(c.ID, id) }) {
		return false, nil
	}
	if st := f["status"]; len(st) > 0 && !anyMatch(st, func(s string) bool { return s == string(c.State) }) {
		return false, nil
	}
	if ex := f["exited"]; len(ex) > 0 && (c.State != backends.StateExited || !anyMatch(ex, func(s string) bool { return s == strconv.Itoa(c.ExitCode) })) {
		return false, nil
	}
	if hs := f["health"]; len(hs) > 0 && !anyMatch(hs, func(h string) bool { return h == string(c.Health) || (h == "none" && c.Health == "") }) {
		return false, nil
	}
	if an := f["ancestor"]; len(an) > 0 && !anyMatch(an, func(a string) bool {
		return a == c.Image || a == c.ImageID || strings.HasPrefix(c.ImageID, "sha256:"+a)
	}) {
		return false, nil
	}
	if nets := f["network"]; len(nets) > 0 && !anyMatch(nets, func(n string) bool { _, ok := c.Networks[n]; return ok }) {
		return false, nil
	}
	return true, nil
}

func anyMatch(vals []string, pred func(string) bool) bool {
	for _, v := range vals {
		if pred(v) {
			return true
		}
	}
	return false
}

var validName = regexp.MustCompile(`^/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

func (s *Server) containerCreate(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req container.CreateRequest
	if err := decodeJSON(w, r, maxCreateBody, &req); err != nil {
		writeError(w, err)
		return
	}
	name := strings.TrimPrefix(r.URL.Query().Get("name"), "/")
	if name == "" {
		name = randomName()
	} else if !validName.MatchString(name) {
		writeError(w, invalidParam("Invalid container name (%s), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed", name))
		return
	}
	if req.Config == nil || req.Config.Image == "" {
		writeError(w, invalidParam("Config cannot be empty in order to create a container"))
		return
	}
	if existing, err := s.container(ctx, name); err == nil {
		writeError(w, fmt.Errorf("Conflict. The container name \"/%s\" is already in use by container \"%s\". You have to remove (or rename) that container to be able to reuse that name: %w", name, existing.ID, errdefs.ErrConflict))
		return
	}
	images, ok := want[backends.Images](s, w, backends.FeatureImages, "creating containers through the Docker API (it needs local images)")
	if !ok {
		return
	}
	if _, err := images.InspectImage(ctx, req.Config.Image); err != nil {
		if errdefs.IsNotFound(err) {
			err = fmt.Errorf("No such image: %s: %w", req.Config.Image, errdefs.ErrNotFound)
		}
		writeError(w, err)
		return
	}
	known, err := s.networkNames(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	in, warns, err := createbody.ToApp(createbody.Input{Req: req, Name: name, Networks: known})
	if err != nil {
		writeError(w, err)
		return
	}
	uses, err := s.volumesFor(ctx, in.Volumes)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkCreate(name, in.App, uses); err != nil {
		writeError(w, err)
		return
	}
	for _, wr := range backends.Unhonored(s.b.Name(), s.b.Capabilities(), in.App) {
		warns = append(warns, wr.String())
	}
	cs, err := backends.Resolve(in)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.createVolumes(ctx, uses); err != nil {
		writeError(w, err)
		return
	}
	c, err := s.b.Create(ctx, cs)
	if err != nil {
		writeError(w, err)
		return
	}
	s.cache.invalidateID(c.ID)
	if req.HostConfig != nil && req.HostConfig.AutoRemove {
		s.mu.Lock()
		s.autoRemove[c.ID] = true
		s.mu.Unlock()
	}
	if warns == nil {
		warns = []string{}
	}
	writeJSON(w, http.StatusCreated, container.CreateResponse{ID: c.ID, Warnings: warns})
}

// createVolumes creates the named volumes the runtime does not have yet,
// as dockerd does on container create.
func (s *Server) createVolumes(ctx context.Context, uses map[string]volumeUse) error {
	for name, u := range uses {
		if u.exists {
			continue
		}
		if _, err := s.b.EnsureVolume(ctx, backends.VolumeSpec{Key: name, Volume: u.vol}); err != nil {
			return fmt.Errorf("create volume %s: %w", name, err)
		}
	}
	return nil
}

func (s *Server) isAutoRemove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.autoRemove[id]
}

func (s *Server) containerStart(w http.ResponseWriter, r *http.Request) {
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error {
		if d.State == backends.StateRunning {
			return errdefs.ErrNotModified
		}
		if err := s.b.Start(ctx, d.ID); err != nil {
			return err
		}
		if s.isAutoRemove(d.ID) {
			go s.removeWhenDone(d.ID)
		}
		return nil
	})
}

// attachDrain bounds how long an auto-removed container that exited waits
// for its attach streams to deliver the rest of its output.
const attachDrain = 30 * time.Second

// removeWhenDone implements HostConfig.AutoRemove (docker run --rm) for
// every backend: remove the container once it exits and its attach
// streams have ended (a bounded wait: they end with the container).
func (s *Server) removeWhenDone(id string) {
	ctx := context.Background()
	if _, err := s.b.Wait(ctx, id); err != nil && errdefs.IsNotFound(err) {
		return
	}
	drained, cancel := context.WithTimeout(ctx, attachDrain)
	s.attached.wait(drained, id)
	cancel()
	_ = s.b.Remove(ctx, id, backends.RemoveOptions{Force: true, Volumes: true})
	s.cache.invalidateID(id)
	s.mu.Lock()
	delete(s.autoRemove, id)
	s.mu.Unlock()
}

func (s *Server) containerDelete(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	force := boolValue(q.Get("force"))
	s.mutate(w, r, func(ctx context.Context, d backends.ContainerDetails) error {
		if d.Running() && !force {
			return fmt.Errorf("You cannot remove a running container %s. Stop the container before attempting removal or force remove: %w", d.ID, errdefs.ErrConflict)
		}
		if err := s.b.Remove(ctx, d.ID, backends.RemoveOptions{Force: force, Volumes: boolValue(q.Get("v"))}); err != nil {
			return err
		}
		s.mu.Lock()
		delete(s.autoRemove, d.ID)
		s.mu.Unlock()
		return nil
	})
}

func (s *Server) containerTop(w http.ResponseWriter, r *http.Request) {
	pl, ok := want[backends.ProcessLister](s, w, backends.FeatureTop, "top")
	if !ok {
		return
	}
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	if !d.Running() {
		writeError(w, fmt.Errorf("Container %s is not running: %w", d.ID, errdefs.ErrConflict))
		return
	}
	ps, err := pl.Top(r.Context(), d.ID, r.URL.Query().Get("ps_args"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, container.TopResponse{Titles: ps.Titles, Processes: ps.Processes})
}

// flush pushes headers and buffered output to the client now.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// flushWriter flushes after every write, for streams (logs -f, events).
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	flush(f.w)
	return n, err
}

var _ io.Writer = flushWriter{}
