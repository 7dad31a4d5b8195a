package clientdeploy

import (
	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/caretaker"
	"github.com/cornus-dev/cornus/engine"
)

// companions gives a local engine its caretaker companions (egress,
// mounts, port-forward next to the app).
func companions(b backends.Backend, environ []string) engine.Option {
	return engine.WithCompanions(&caretaker.Companions{Backend: b, Environ: environ})
}
