// Package translate maps a loaded Compose project (compose-go types, with
// cornus's extensions typed by package compose) onto the native
// spec.Project. It is a pure function: no I/O, inputs are not mutated.
//
// Entry point: [Translate]. Every Compose service attribute is either mapped
// or reported as a spec.Warning naming the service and the attribute; the
// table in fields.go classifies them all and a test keeps it complete.
//
// translate imports compose and spec; never engine or backends.
package translate
