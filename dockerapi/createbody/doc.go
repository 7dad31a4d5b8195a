// Package createbody converts between Docker Engine API container-create
// bodies and cornus's container specs, both ways, in one place: FromSpec
// builds the body the dockerhost backend sends to dockerd from a resolved
// backends.ContainerSpec; ToApp reads the body a Docker client sent to the
// proxy (dockerapi) into a spec.App, which the host policy checks and
// backends.Resolve turns into a ContainerSpec. A round-trip test and a
// completeness test over HostConfig's fields keep the two directions
// honest. It does no I/O; it imports backends, spec and moby's wire types.
package createbody
