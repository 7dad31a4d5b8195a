package dockerapi

import (
	"net/http"
	"strings"
)

// routes registers every endpoint. Paths are unversioned here: withVersion
// strips /vX.Y first.
func (s *Server) routes() {
	m := s.mux
	// system
	m.HandleFunc("GET /_ping", s.ping)
	m.HandleFunc("HEAD /_ping", s.ping)
	m.HandleFunc("GET /version", s.version)
	m.HandleFunc("GET /info", s.info)
	m.HandleFunc("GET /events", s.eventsStream)
	// containers
	m.HandleFunc("GET /containers/json", s.containerList)
	m.HandleFunc("POST /containers/create", s.containerCreate)
	m.HandleFunc("GET /containers/{id}/json", s.containerInspect)
	m.HandleFunc("GET /containers/{id}/logs", s.containerLogs)
	m.HandleFunc("GET /containers/{id}/top", s.containerTop)
	m.HandleFunc("GET /containers/{id}/stats", s.containerStats)
	m.HandleFunc("POST /containers/{id}/start", s.containerStart)
	m.HandleFunc("POST /containers/{id}/stop", s.containerStop)
	m.HandleFunc("POST /containers/{id}/restart", s.containerRestart)
	m.HandleFunc("POST /containers/{id}/kill", s.containerKill)
	m.HandleFunc("POST /containers/{id}/pause", s.containerPause)
	m.HandleFunc("POST /containers/{id}/unpause", s.containerUnpause)
	m.HandleFunc("POST /containers/{id}/wait", s.containerWait)
	m.HandleFunc("POST /containers/{id}/attach", s.containerAttach)
	m.HandleFunc("POST /containers/{id}/resize", s.containerResize)
	m.HandleFunc("POST /containers/{id}/rename", s.containerRename)
	m.HandleFunc("DELETE /containers/{id}", s.containerDelete)
	m.HandleFunc("GET /containers/{id}/archive", s.archiveGet)
	m.HandleFunc("HEAD /containers/{id}/archive", s.archiveHead)
	m.HandleFunc("PUT /containers/{id}/archive", s.archivePut)
	m.HandleFunc("GET /containers/{id}/export", s.containerExport)
	m.HandleFunc("POST /commit", s.commit)
	// exec
	m.HandleFunc("POST /containers/{id}/exec", s.execCreate)
	m.HandleFunc("POST /exec/{id}/start", s.execStart)
	m.HandleFunc("POST /exec/{id}/resize", s.execResize)
	m.HandleFunc("GET /exec/{id}/json", s.execInspect)
	// images (names contain slashes, so the rest of the path is parsed)
	m.HandleFunc("GET /images/json", s.imageList)
	m.HandleFunc("POST /images/load", s.imageLoad)
	m.HandleFunc("POST /images/create", s.imagePull)
	m.HandleFunc("GET /images/{ref...}", s.imageGet)
	m.HandleFunc("DELETE /images/{ref...}", s.imageDelete)
	// networks
	m.HandleFunc("GET /networks", s.networkList)
	m.HandleFunc("GET /networks/{id}", s.networkInspect)
	m.HandleFunc("POST /networks/create", s.networkCreate)
	m.HandleFunc("DELETE /networks/{id}", s.networkDelete)
	m.HandleFunc("POST /networks/{id}/connect", s.networkConnect)
	m.HandleFunc("POST /networks/{id}/disconnect", s.networkDisconnect)
	// volumes
	m.HandleFunc("GET /volumes", s.volumeList)
	m.HandleFunc("GET /volumes/{name}", s.volumeInspect)
	m.HandleFunc("POST /volumes/create", s.volumeCreate)
	m.HandleFunc("DELETE /volumes/{name}", s.volumeDelete)
	// builds
	m.HandleFunc("POST /build", s.imageBuild)
	m.HandleFunc("POST /grpc", s.buildkitGRPC)
	m.HandleFunc("POST /session", s.buildkitSession)
	m.HandleFunc("/", s.unknown)
}

// engineOnly are Engine endpoints cornus knows but does not serve.
var engineOnly = []string{
	"/swarm", "/services", "/nodes", "/tasks", "/secrets", "/configs", "/plugins",
	"/distribution", "/system/df", "/commit", "/auth", "/images/search", "/build/prune",
	"/containers/prune", "/images/prune", "/networks/prune", "/volumes/prune",
}

// unknown answers endpoints not served: 501 for Engine endpoints cornus
// does not implement, 404 otherwise, naming the endpoint either way.
func (s *Server) unknown(w http.ResponseWriter, r *http.Request) {
	endpoint := r.Method + " " + r.URL.Path
	for _, p := range engineOnly {
		if r.URL.Path == p || strings.HasPrefix(r.URL.Path, p+"/") {
			writeMessage(w, http.StatusNotImplemented, endpoint+" is not implemented by cornus")
			return
		}
	}
	if strings.HasPrefix(r.URL.Path, "/containers/") && (strings.HasSuffix(r.URL.Path, "/changes") ||
		strings.HasSuffix(r.URL.Path, "/update") || strings.HasSuffix(r.URL.Path, "/export")) {
		writeMessage(w, http.StatusNotImplemented, endpoint+" is not implemented by cornus")
		return
	}
	writeMessage(w, http.StatusNotFound, "page not found: "+endpoint)
}
