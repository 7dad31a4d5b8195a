package containerd

import (
	"fmt"

	"github.com/containerd/containerd/v2/client"

	"github.com/cornus-dev/cornus/backends/internal/rootfs"
)

// lookupUser resolves a user ("name", "uid", "uid:gid", "name:group") the
// way the running container's own /etc/passwd and /etc/group say.
func lookupUser(task client.Task, user string) (uint32, uint32, error) {
	root, err := rootfs.Open(fmt.Sprintf("/proc/%d/root", task.Pid()))
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	u, err := root.LookupUser(user)
	return u.UID, u.GID, err
}
