// Package registry serves the OCI Distribution API (/v2/) over a Store:
// pull (manifests by tag and digest, blobs, ranges), push (monolithic,
// chunked and resumable uploads, cross-repository mount), tags and a
// paginated catalog, deletes and the referrers API.
//
// The handler owns the protocol, upload sessions (bounded, verified
// before anything is committed) and who may do what (Access); a Store
// owns where content lives: FSStore keeps it under a directory, and
// backends re-export their own image stores through the same interface.
//
// It must not import the server or any backend.
package registry
