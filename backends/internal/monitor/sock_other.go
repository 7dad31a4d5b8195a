//go:build !linux

package monitor

// socketAddr uses the path as is: without /proc there is no way around
// sun_path's length limit, so a too-deep records directory fails to bind.
func socketAddr(path string) (addr string, release func(), err error) {
	return path, func() {}, nil
}
