// Package spec is cornus's native deploy spec: the one description of an
// application that every front end (Compose, devcontainer.json, deploy.yaml)
// is translated into and every backend applies.
//
// Entry points: [Load] / [LoadFile] read a deploy.yaml (YAML or JSON, strict
// field checking, either a single-app document or a project document with
// `services`), [Project.Validate] reports every problem at once with its field
// path, and the types themselves marshal back to YAML/JSON deterministically.
//
// spec imports nothing else from cornus but internal/boundedfile (a
// standard-library-only leaf that bounds what LoadFile reads); everything
// else imports spec.
package spec
