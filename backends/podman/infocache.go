package podman

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/internal/svc"
)

// The service's facts (GET /libpod/info) take podman a quarter of a second
// and more to gather (it collects host and storage statistics too), and
// every cornus command needs them (rootless, cgroups, who schedules
// healthchecks). They are kept in the state directory for the next
// command while the same service answers: for a unix socket, as long as
// it is the same socket file (a restarted service makes a new one); for
// TCP, a minute. A private service (CORNUS_PODMAN_SERVICE=1) is new with
// every process: nothing is kept.

// infoCacheTTL bounds how long facts of a TCP endpoint are reused.
const infoCacheTTL = time.Minute

// infoRecord is one kept answer.
type infoRecord struct {
	Endpoint string    `json:"endpoint"`
	Socket   string    `json:"socket,omitempty"` // identity of the unix socket file
	Fetched  time.Time `json:"fetched"`
	Info     hostInfo  `json:"info"`
}

func (b *Backend) infoCachePath() string {
	sum := sha256.Sum256([]byte(b.Endpoint()))
	return filepath.Join(svc.StateDir(b.cfg.environ), "podman", "info-"+hex.EncodeToString(sum[:8])+".json")
}

// socketIdentity names the socket file behind a unix endpoint: inode and
// change time; "" when there is none (or the endpoint is TCP).
func socketIdentity(ep endpoint) string {
	if ep.network != "unix" {
		return ""
	}
	var st syscall.Stat_t
	if err := syscall.Stat(ep.address, &st); err != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d.%09d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}

// cachedInfo returns kept facts that still hold for the endpoint.
func (b *Backend) cachedInfo() (*hostInfo, bool) {
	if b.svc != nil {
		return nil, false
	}
	data, err := os.ReadFile(b.infoCachePath())
	if err != nil {
		return nil, false
	}
	var r infoRecord
	if json.Unmarshal(data, &r) != nil || r.Endpoint != b.Endpoint() {
		return nil, false
	}
	ep := b.cli.ep()
	if id := socketIdentity(ep); ep.network == "unix" && (id == "" || id != r.Socket) {
		return nil, false
	}
	if ep.network != "unix" && time.Since(r.Fetched) > infoCacheTTL {
		return nil, false
	}
	return &r.Info, true
}

// keepInfo stores fresh facts for the next command (best effort; written
// whole through a rename, never half).
func (b *Backend) keepInfo(info hostInfo) {
	if b.svc != nil {
		return
	}
	r := infoRecord{Endpoint: b.Endpoint(), Socket: socketIdentity(b.cli.ep()), Fetched: time.Now(), Info: info}
	if r.Socket == "" && b.cli.ep().network == "unix" {
		return
	}
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	path := b.infoCachePath()
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".info-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
