package dockerapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/volume"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

func volumeOf(v backends.Volume) volume.Volume {
	out := volume.Volume{Name: v.Name, Driver: v.Driver, Mountpoint: v.Mountpoint, Labels: v.Labels, Options: v.Options, Scope: "local"}
	if !v.Created.IsZero() {
		out.CreatedAt = timeString(v.Created)
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if out.Driver == "" {
		out.Driver = "local"
	}
	return out
}

func (s *Server) volumeList(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilters(r.URL.Query().Get("filters"))
	if err != nil {
		writeError(w, err)
		return
	}
	vols, err := s.b.ListVolumes(r.Context(), backends.ListOptions{Labels: f.labels()})
	if err != nil {
		writeError(w, err)
		return
	}
	out := volume.ListResponse{Volumes: []volume.Volume{}, Warnings: []string{}}
	for _, v := range vols {
		if !filterMatch(f["name"], func(n string) bool { return strings.Contains(v.Name, n) }) ||
			!filterMatch(f["driver"], func(d string) bool { return d == v.Driver }) {
			continue
		}
		out.Volumes = append(out.Volumes, volumeOf(v))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) volume(r *http.Request, name string) (backends.Volume, error) {
	vols, err := s.b.ListVolumes(r.Context(), backends.ListOptions{})
	if err != nil {
		return backends.Volume{}, err
	}
	for _, v := range vols {
		if v.Name == name {
			return v, nil
		}
	}
	return backends.Volume{}, fmt.Errorf("get %s: no such volume: %w", name, errdefs.ErrNotFound)
}

func (s *Server) volumeInspect(w http.ResponseWriter, r *http.Request) {
	v, err := s.volume(r, r.PathValue("name"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, volumeOf(v))
}

func (s *Server) volumeCreate(w http.ResponseWriter, r *http.Request) {
	var req volume.CreateRequest
	if err := decodeJSON(w, r, maxSmallBody, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Name == "" {
		req.Name = randomVolumeName()
	}
	if v, err := s.volume(r, req.Name); err == nil {
		writeJSON(w, http.StatusCreated, volumeOf(v)) // dockerd answers an existing volume
		return
	}
	vol := spec.Volume{Name: req.Name, Driver: req.Driver, DriverOpts: req.DriverOpts, Labels: req.Labels}
	if err := policyError("volume "+req.Name, s.policy.CheckVolume("volume", vol)); err != nil {
		writeError(w, err)
		return
	}
	key := req.Labels[backends.ComposeVolume]
	if key == "" {
		key = req.Name
	}
	v, err := s.b.EnsureVolume(r.Context(), backends.VolumeSpec{
		Project: req.Labels[backends.ComposeProject], Key: key, Labels: req.Labels,
		Volume: vol,
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, volumeOf(v))
}

func (s *Server) volumeDelete(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, err := s.volume(r, name); err != nil {
		writeError(w, err)
		return
	}
	if err := s.b.RemoveVolume(r.Context(), name, boolValue(r.URL.Query().Get("force"))); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// randomVolumeName is an anonymous volume's name: 64 hex digits, as dockerd.
func randomVolumeName() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
