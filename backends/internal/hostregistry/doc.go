// Package hostregistry is the server registry's store over a backend
// whose image store keeps no registry content (dockerd's classic store,
// libpod's containers/storage: layers unpacked, and a config). A staging
// store (registry.FSStore under the server's data directory) holds blobs
// and manifests, and the backend's images are the truth it follows:
//   - a manifest pushed with a tag is loaded into the backend at once (a
//     docker-archive made from the staged blobs): the image runs with no
//     other load, its ID the manifest's config digest;
//   - a tag the backend has is exported from it (a docker-archive) into
//     the stage when asked for, unless the stage holds that very image:
//     every image the backend has can be pulled, its config (the image ID)
//     and layers byte for byte;
//   - what the backend cannot hold (an artifact, a layer it cannot load)
//     stays in the stage only, and is served from there.
//
// Repository R's tag T is the image R:T as the backend names it (app is
// docker.io/library/app).
package hostregistry
