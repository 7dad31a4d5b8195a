//go:build !linux

package clientdeploy

import (
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
)

// companions gives a local engine no caretaker companions off Linux:
// the caretaker's host side (its mounts) is Linux's; a deploy that needs
// one goes through a cornus server.
func companions(backends.Backend, []string) engine.Option {
	return engine.WithCompanions(nil)
}
