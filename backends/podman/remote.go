package podman

// RemoteMode reports whether EnvRemote turned remote mode on
// (backends.RemoteModer).
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }
