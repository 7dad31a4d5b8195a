package daemonless

import (
	"context"

	imagespec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/ocispec"
	"github.com/cornus-dev/cornus/backends/internal/records"
)

// Runtime is what a daemonless backend does itself: the containers and
// tasks of its runtime, and its images. Everything else (records, CNI,
// the monitor, the state machine) is the Core's. IDs passed are full
// container IDs the Core found in its records.
type Runtime interface {
	// IDs lists the containers there may be (those the runtime knows, or
	// the containers' directories).
	IDs(ctx context.Context) ([]string, error)
	// Running asks the runtime whether the container's task runs or is
	// paused (for a container whose monitor is gone).
	Running(id string) bool
	// InitPid is the pid of the running container's init; an error or 0
	// when it does not run.
	InitPid(ctx context.Context, id string) (int, error)
	// Pids lists the pids of the container's processes.
	Pids(ctx context.Context, id string) ([]int, error)
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	// KillOrphan ends a container whose monitor is gone and returns its
	// exit code; the Core records it.
	KillOrphan(ctx context.Context, id string) (int, error)
	// Delete removes the runtime's container and what the runtime made for
	// it (task, snapshot or mounted root); a container it does not have is
	// no error.
	Delete(ctx context.Context, id string) error
	// Rename tells the runtime a container's new name (a label), if it
	// keeps one.
	Rename(ctx context.Context, id, name string) error
	// Exec runs a process in the running container.
	Exec(ctx context.Context, st records.Container, r ExecRequest) (int, error)
	// Build resolves a create's image (unpacked, ready) and says how the
	// runtime makes the container from it.
	Build(ctx context.Context, cs backends.ContainerSpec) (Build, error)
}

// Build is the runtime's part of one Create.
type Build struct {
	ImageID string                // the image's config digest (ContainerDetails.Image)
	Image   imagespec.ImageConfig // what the OCI spec starts from
	// Root, when set, makes the container's root filesystem first and
	// returns its path for the spec, and the image layers it is made of
	// for container.json; its undo goes on undo.
	Root func(id string, undo *[]func()) (path string, layers []string, err error)
	// Make creates the runtime's container from the spec's input and
	// seeds st's volumes from the image; its undo goes on undo.
	Make func(ctx context.Context, st records.Container, in ocispec.Input, undo *[]func()) error
}
