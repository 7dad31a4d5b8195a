// Package procattr holds the process attributes cornus gives the daemons
// it starts (buildkitd, a podman system service): a process group of
// their own, so a terminal's ^C reaches cornus, which stops them in
// order, and on Linux SIGTERM should cornus die first.
package procattr
