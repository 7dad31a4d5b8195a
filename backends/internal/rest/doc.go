// Package rest is the skeleton the REST backends share (podman's libpod
// API, Incus): a transport over the daemon's one socket, JSON request
// bodies, bounded JSON and error answers, and failures classed with
// errdefs. Each backend keeps its own URLs, answer envelope and message
// rules.
package rest
