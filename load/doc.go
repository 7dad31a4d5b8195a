// Package load turns any front-end input — Compose files, a
// devcontainer.json, or a native deploy.yaml — into one validated
// spec.Project plus the warnings gathered on the way, so the CLI's
// commands never chain compose, translate and spec themselves.
//
// Entry points: [Compose] (compose.Load, then translate.Translate and
// Project.Validate, with problems named as the Compose file spells them;
// with no -f, no COMPOSE_FILE and no --config it takes the nearest
// directory holding a Compose file or a devcontainer config, from the
// working directory up, and Result.Source says which) and [Spec] (a
// deploy.yaml through spec.LoadFile). A project whose every service sits
// behind an inactive profile is an error naming the profiles that would
// enable them. Result.Dir is where relative paths were resolved.
//
// load imports compose, translate and spec; never the engine or a backend.
package load
