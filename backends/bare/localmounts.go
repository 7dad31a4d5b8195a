package bare

import "context"

// CheckLocalMounts says the bare backend takes a `cornus serve` session's
// client-local mounts as host binds (server/mounts.go asks): runc runs in
// the server host's mount namespace, so a bind of the server's FUSE
// mountpoint is the fast path, as on dockerhost.
func (b *Backend) CheckLocalMounts(context.Context) error { return nil }
