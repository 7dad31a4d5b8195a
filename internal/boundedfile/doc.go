// Package boundedfile owns reading the files a user names — Compose files
// (and the files they include or extend), env and label files,
// devcontainer.json, deploy.yaml, secret and config files, docker CLI
// config — so that none of them can make cornus read forever or hold an
// unbounded amount of memory (`env_file: /dev/zero`, a FIFO, a 50 MB
// single string).
//
// Entry points: [Read] (stat, open, fstat, then read at most the limit for
// its [Kind]), [ReadFrom] (the same limit on a stream such as stdin) and
// [Check] (the stat checks alone, for files a library reads itself). Every
// refusal names the file, says what it is and what to do, and matches
// [ErrNotRegular] or [ErrTooLarge].
//
// It imports only the standard library, so that any package (spec
// included) may use it.
package boundedfile
