// Package backends is the backend contract: the required Backend verbs
// (backend.go), the optional features a backend offers by implementing
// them (optional.go: its Capabilities().Features is FeaturesOf, callers
// ask Want), the resolved ContainerSpec a
// backend receives (containerspec.go, built by Resolve from a spec.App) and
// the typed state it reports (container.go). It also holds the identity
// labels every backend stores and the Unhonored warnings for declared
// gaps. It imports spec only.
//
// Subpackages: one per runtime (dockerhost, ...), backendtest (the
// contract suite every backend runs against its real daemon), registry
// (selection by CORNUS_DEPLOY_BACKEND) and internal/ (machinery the
// daemonless runtimes share).
package backends
