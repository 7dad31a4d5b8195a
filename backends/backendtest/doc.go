// Package backendtest is the contract suite every backend runs against its
// real daemon: the same spec in, the same observable behaviour out. Each
// backend's tests call Run (suite.go).
//
// Cases (cases.go, compat.go) are either one behaviour of the fields they
// exercise, which a declared gap turns into a check of its warning, or
// parts, one per field (parts.go): a gap drops only its own part, whose
// warning is checked on a deployment of its own, and the rest is deployed
// and checked as honored. Gaps may name one value of a mode field
// (networkMode=none). Optional features have behaviour cases run where
// Capabilities().Features declares them (features.go, features_more.go,
// pull.go with the loopback registry of registry.go), never chosen by
// backend name. The floor (floor.go) is what no backend may declare a gap
// but through AllowedGaps; the host-power table (hostpower.go) is refused
// by default and honored once allowed, here and in the e2e front ends.
//
// It imports backends, engine, hostpolicy, spec and the test helpers
// (internal/testimage, internal/testnet); no backend.
package backendtest
