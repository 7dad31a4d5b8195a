// Package load turns any front-end input — Compose files, a
// devcontainer.json, or a native deploy.yaml — into one validated
// spec.Project plus the warnings gathered on the way. CLI commands and the
// Docker API server call it instead of chaining compose, translate and spec
// themselves.
package load
