// Package compose loads Compose projects into compose-go's project model.
// It is the only cornus package that uses compose-go's loader and OS layer
// (env files, file discovery).
//
// Entry points: [Load]; [LoadOverlay] for a front end that generates a
// Compose file in memory (compose/devcontainer); [Discover] finds the
// nearest Compose file or devcontainer config. Compose files get override
// merging, include, extends, profiles, interpolation, .env and env_file.
// cornus's extensions (x-cornus-egress, x-cornus-devcontainer) come back
// typed and validated.
//
// Every file a project names is bounded (internal/boundedfile): cornus
// reads Compose and env files itself, and checks the files compose-go
// reads on its own (include, extends, env_file, label_file) before it does.
//
// compose imports spec, never translate, engine or backends.
package compose
