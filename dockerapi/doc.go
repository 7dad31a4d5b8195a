// Package dockerapi serves the Docker Engine API over any cornus backend, so
// stock clients — the docker CLI, docker compose, the devcontainer CLI —
// work through DOCKER_HOST on every runtime cornus supports. It maps Engine
// calls onto the backends.Backend interface; it is not a byte pass-through
// to dockerd.
//
// Wire types are moby's own (github.com/moby/moby/api/types), so JSON
// casing is exactly the Engine's. Entry point: New(backend, opts...) and
// Server.Handler (or Serve on a listener); Listen opens a unix socket or a
// loopback-only TCP address (CheckListen refuses any other up front, the
// API having no authentication). Errors are mapped from
// containerd/errdefs classes to HTTP statuses in one place (errors.go).
// Every JSON body is decoded by one helper with a per-endpoint size limit
// (body.go); archive uploads and image loads stream to the backend.
//
// Requests may name an API version from MinAPIVersion to MaxAPIVersion
// (version.go, as dockerd checks them). Container creates are read by
// createbody.ToApp and checked against the host policy (WithPolicy;
// by default nothing is allowed) before the backend sees them; a feature
// the backend does not declare answers 501 naming the backend
// (features.go).
//
// Container list and inspect are served from a cache (cache.go) that the
// backend's events and the server's own writes invalidate, live only once
// the backend confirms its event subscription; WithReadCache(false) turns
// it off and WithCacheTTL bounds (or, for tests, unbounds) its age.
//
// POST /build builds with the builder package (WithBuilder), from the
// uploaded tar context (build.go).
//
// dockerapi imports backends, builder, dockerapi/createbody, hostpolicy,
// spec and internal/{buildinfo,statustext}; never the engine or the CLI.
package dockerapi
