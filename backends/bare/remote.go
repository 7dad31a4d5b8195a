package bare

// RemoteMode reports whether EnvRemote turned remote mode on
// (backends.RemoteModer).
func (b *Backend) RemoteMode() (bool, string) { return b.cfg.remote, EnvRemote }

// RemoteMountsOnly says remote mode moves only mounts and credentials
// next to the app (backends.RemoteMountsOnly): runc runs on the server's
// host, which reaches the workloads' networks (port-forward, tunnel) as
// outside remote mode.
func (b *Backend) RemoteMountsOnly() bool { return true }
