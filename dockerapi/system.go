package dockerapi

import (
	"net/http"
	"runtime"
	"time"

	"github.com/moby/moby/api/types/system"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/buildinfo"
)

func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache, no-store, must-revalidate")
	w.Header().Set("Pragma", "no-cache")
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", "0")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("OK"))
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	v := buildinfo.Version()
	writeJSON(w, http.StatusOK, system.VersionResponse{
		Platform: struct{ Name string }{Name: "cornus (" + s.b.Name() + " backend)"},
		Components: []system.ComponentVersion{{
			Name: "Engine", Version: v,
			Details: map[string]string{"ApiVersion": MaxAPIVersion, "MinAPIVersion": MinAPIVersion, "Backend": s.b.Name(), "Os": "linux", "Arch": runtime.GOARCH, "GoVersion": runtime.Version()},
		}},
		Version: v, APIVersion: MaxAPIVersion, MinAPIVersion: MinAPIVersion,
		GoVersion: runtime.Version(), Os: "linux", Arch: runtime.GOARCH,
		BuildTime: s.start.UTC().Format(time.RFC3339),
	})
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	cs, err := s.b.List(ctx, backends.ListOptions{All: true})
	if err != nil {
		writeError(w, err)
		return
	}
	imgs, err := s.imageStore().ListImages(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	info := system.Info{
		ID: "cornus", Name: "cornus-" + s.b.Name(), ServerVersion: buildinfo.Version(),
		Containers: len(cs), Images: len(imgs), Driver: s.b.Name(),
		OSType: "linux", OperatingSystem: "cornus (" + s.b.Name() + " backend)", Architecture: runtime.GOARCH,
		NCPU: runtime.NumCPU(), DockerRootDir: "/var/lib/cornus", LoggingDriver: "json-file", CgroupDriver: "cgroupfs",
		DefaultRuntime: "runc", SystemTime: time.Now().Format(time.RFC3339Nano), IndexServerAddress: "https://index.docker.io/v1/",
		Labels: []string{"org.cornus.backend=" + s.b.Name()},
	}
	for _, c := range cs {
		switch c.State {
		case backends.StateRunning, backends.StateRestarting:
			info.ContainersRunning++
		case backends.StatePaused:
			info.ContainersPaused++
		default:
			info.ContainersStopped++
		}
	}
	writeJSON(w, http.StatusOK, info)
}
