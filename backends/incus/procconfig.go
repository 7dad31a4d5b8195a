package incus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containerd/errdefs"
)

// processFile is the name of the process configuration in a container's
// record directory.
const processFile = "process.json"

// procConfig is process.json: how the container's init (cornus itself,
// running inside the container) prepares the container and runs the main
// process, and how the exec helper runs commands beside it with the same
// identity and confinement. The backend writes it at create; the init and
// the helper read it from the record directory mounted into the
// container. Paths are the container's.
type procConfig struct {
	Args       []string `json:"args"`
	Env        []string `json:"env"`
	User       string   `json:"user,omitempty"` // user[:group], names or numbers; "" root
	WorkingDir string   `json:"workingDir,omitempty"`
	GroupAdd   []string `json:"groupAdd,omitempty"`
	TTY        bool     `json:"tty,omitempty"`
	Domainname string   `json:"domainname,omitempty"`
	// Tmpfs are mounted first, then ShmSize sizes /dev/shm (0: 64 MiB).
	Tmpfs   []tmpfsMount `json:"tmpfs,omitempty"`
	ShmSize int64        `json:"shmSize,omitempty"`
	// Binds are bind mounts made inside the container: files of the
	// record directory (secrets, configs, hosts, resolv.conf) and volume
	// subpaths.
	Binds []bindMount `json:"binds,omitempty"`
	// ReadOnly remounts the root filesystem read-only once the rest is in
	// place.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Caps is the capability bounding set of the main process, healthcheck
	// probes and exec'd commands (nil: every capability the container has,
	// for a privileged container).
	Caps       []string `json:"caps"`
	NoNewPrivs bool     `json:"noNewPrivs,omitempty"`
	// Nofile is the spec's open-files limit (soft, hard), which Incus
	// sets (limits.kernel.nofile) and the init puts back on itself: Go
	// raises its own soft limit to the hard one at start.
	Nofile *[2]int64 `json:"nofile,omitempty"`
}

type tmpfsMount struct {
	Target string `json:"target"`
	Size   int64  `json:"size,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
}

type bindMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	File     bool   `json:"file,omitempty"` // a file, not a directory
}

// maxProcessFile bounds what is read of process.json.
const maxProcessFile = 8 << 20

func readProcConfig(dir string) (procConfig, error) {
	var p procConfig
	path := filepath.Join(dir, processFile)
	f, err := os.Open(path)
	if err != nil {
		return p, fmt.Errorf("read container configuration %s: %w", path, err)
	}
	defer f.Close()
	if err := decodeBounded(f, maxProcessFile, &p); err != nil {
		return p, fmt.Errorf("container configuration %s: %w", path, err)
	}
	return p, nil
}

func writeProcConfig(dir string, p procConfig) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, processFile), append(data, '\n'), 0o600)
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

func decodeBounded(f *os.File, limit int64, out any) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() > limit {
		return fmt.Errorf("larger than %d bytes: %w", limit, errdefs.ErrResourceExhausted)
	}
	return json.NewDecoder(f).Decode(out)
}

// mergeEnv overlays KEY=VALUE entries: a later key replaces an earlier one
// in place.
func mergeEnv(base []string, over ...[]string) []string {
	out := append([]string(nil), base...)
	idx := map[string]int{}
	for i, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		idx[k] = i
	}
	for _, list := range over {
		for _, kv := range list {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := idx[k]; ok {
				out[i] = kv
				continue
			}
			idx[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}

// defaultPath is the PATH a container gets when its image sets none.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
