package bare

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// stored is container.json in the container's directory: what cornus
// decided at create (the resolved spec without file contents, the
// networking it set up), which the runtime does not keep.
type stored struct {
	ID        string                           `json:"id"`
	Name      string                           `json:"name"`
	Spec      backends.ContainerSpec           `json:"spec"`
	ImageID   string                           `json:"imageID"`
	Layers    []string                         `json:"layers"` // the snapshotter's keys, lowest first
	Created   time.Time                        `json:"created"`
	Netns     string                           `json:"netns,omitempty"`
	Ports     []backends.PortBinding           `json:"ports,omitempty"`
	Networks  map[string]backends.EndpointInfo `json:"networks,omitempty"`
	Mounts    []backends.MountPoint            `json:"mounts,omitempty"`
	Anonymous []string                         `json:"anonymous,omitempty"` // anonymous volumes, removed with -v
	// Paused is set while the task is frozen (Pause); it means nothing
	// once the container has stopped.
	Paused bool `json:"paused,omitempty"`
}

const storedFile = "container.json"

func (b *Backend) readStored(id string) (stored, error) {
	var s stored
	data, err := os.ReadFile(filepath.Join(b.cfg.containerDir(id), storedFile))
	if os.IsNotExist(err) {
		return s, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("container %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("container %s: %s: %w", id, storedFile, err)
	}
	return s, nil
}

// writeStored writes container.json atomically.
func (b *Backend) writeStored(s stored) error {
	s.Spec.Files = nil // secrets stay in their files only
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	dir := b.cfg.containerDir(s.ID)
	tmp := filepath.Join(dir, storedFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("container %s: %w", s.ID, err)
	}
	return os.Rename(tmp, filepath.Join(dir, storedFile))
}
