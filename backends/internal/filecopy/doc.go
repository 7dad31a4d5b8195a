// Package filecopy writes a created container's secrets and configs into
// it through the archive verbs of the Docker-style backends (StatPath,
// CopyTo): one tar, extracted at "/", holding the files with their owners
// and modes and only the parent directories that do not exist yet
// (extracting an existing directory's entry would change its owner and
// mode).
//
// Entry points: Copy, and Tar (the archive alone). It imports backends.
package filecopy
