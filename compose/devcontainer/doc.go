// Package devcontainer is the devcontainer.json front end: it reads a
// devcontainer.json (JSONC; the image/build flavour or the
// dockerComposeFile one), expands its ${localEnv:…}-style variables, maps
// its settings (runArgs, mounts, ports, lifecycle commands, users, the
// workspace) onto one Compose service with the x-cornus-devcontainer
// extension, and loads that as an override over the named Compose files
// with compose.LoadOverlay, so a devcontainer becomes the same compose-go
// project as any Compose file. Keys it cannot honor come back as warnings
// naming them.
//
// Entry point: Load. It imports compose, spec and internal/boundedfile;
// load chooses it for a devcontainer.json.
package devcontainer
