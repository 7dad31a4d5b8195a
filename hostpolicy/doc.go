// Package hostpolicy is cornus's default deny for host power: everything a
// deployed container could use to act on the host — privileged mode,
// devices, capabilities beyond Docker's default set, host namespaces,
// disabled or unvetted confinement (any security option it does not know),
// non-namespaced sysctls, host bind mounts (directly or through volume
// driver options), host storage named by a volume's device option, log
// drivers that make the runtime daemon dial out, and privileged hooks or
// execs — is refused unless CORNUS_ALLOW_PRIVILEGED / CORNUS_ALLOW_BIND_SOURCES
// allow it. power.go defines host power once (securityopt.go, volumes.go
// and logging.go the option vocabularies); every front end (CLI,
// deploy.yaml, the Docker API proxy) checks a spec with it before creating
// anything. LocalDriverMount is the one reading of local-driver volume
// options: backends that mount them read them through it.
//
// It imports spec only; refusals are *DeniedError values, which are
// errdefs PermissionDenied and name each field with the variable that
// allows it.
package hostpolicy
