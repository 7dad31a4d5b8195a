// Package ocispec builds a container's OCI runtime spec (config.json)
// from a resolved backends.ContainerSpec, with Docker's defaults over the
// OCI ones (among them DefaultPath for an image and spec that set no
// PATH), for the backends that drive runc themselves or through
// containerd.
//
// Entry points: Opts (the spec as containerd oci.SpecOpts, from an Input
// the backend fills with its host paths), BindMount and FindInit for the
// mounts Create prepares, EnsureShared for a bind with shared
// propagation, PrivilegedExec for an exec's process. What differs between backends is data in Input: the
// backend's name for messages and, for a backend that mounts the root
// itself, its path. Applying the options (client.WithNewSpec, or
// oci.GenerateSpec with no client) and cgroup placement stay with the
// backend.
//
// It imports backends and containerd's oci package only; never a backend.
package ocispec
