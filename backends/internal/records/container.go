package records

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
)

// Container is container.json in the container's directory: what cornus
// decided at create (the resolved spec without file contents, the
// networking it set up), which the runtime does not keep.
type Container struct {
	ID        string                           `json:"id"`
	Name      string                           `json:"name"`
	Spec      backends.ContainerSpec           `json:"spec"`
	ImageID   string                           `json:"imageID"`
	Layers    []string                         `json:"layers,omitempty"` // the snapshotter's keys, lowest first (bare only)
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

// File is the name of a container's record in its directory.
const File = "container.json"

// Read reads the container's container.json.
func (s *Store) Read(id string) (Container, error) {
	var c Container
	data, err := os.ReadFile(filepath.Join(s.Dir(id), File))
	if os.IsNotExist(err) {
		return c, fmt.Errorf("container %s: %w", id, errdefs.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("container %s: %w", id, err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("container %s: %s: %w", id, File, err)
	}
	return c, nil
}

// Write writes container.json atomically.
func (s *Store) Write(c Container) error {
	c.Spec.Files = nil // secrets stay in their files only
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	dir := s.Dir(c.ID)
	tmp := filepath.Join(dir, File+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("container %s: %w", c.ID, err)
	}
	return os.Rename(tmp, filepath.Join(dir, File))
}

// Exists reports whether the container's directory is there.
func (s *Store) Exists(id string) bool {
	_, err := os.Stat(s.Dir(id))
	return err == nil
}
