package incus

// RemoteMode reports whether EnvRemote turned remote mode on
// (backends.RemoteModer).
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

// SiblingCompanions says a replica's companion is an instance of its own
// beside it: an instance owns its network namespace
// (backends.SiblingCompanions).
func (b *Backend) SiblingCompanions() bool { return true }
