package incus

import (
	"context"

	"golang.org/x/sys/unix"
)

// RemoteMode reports whether EnvRemote turned remote mode on
// (backends.RemoteModer).
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

// CheckLocalMounts says incusd takes a `cornus serve` session's
// client-local mounts as binds of the server's host mounts
// (backends.LocalMounter): it runs on this host (its unix socket is the
// only way this backend reaches it), in remote mode too, where the
// companions beside the apps could not reach them.
func (b *Backend) CheckLocalMounts(context.Context) error { return nil }

// unshiftable reports whether the file system at path takes no idmapped
// mount, so a bind of it must go unshifted: FUSE and 9p, as client-local
// mounts are. Their files then show the host's owners (as nobody where
// the instance maps none), and the export decides every access itself:
// its mounts do not ask the kernel to check permissions.
func unshiftable(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return false
	}
	return st.Type == unix.FUSE_SUPER_MAGIC || st.Type == unix.V9FS_MAGIC
}

// SiblingCompanions says a replica's companion is an instance of its own
// beside it: an instance owns its network namespace
// (backends.SiblingCompanions).
func (b *Backend) SiblingCompanions() bool { return true }
