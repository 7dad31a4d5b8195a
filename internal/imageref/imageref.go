// Package imageref is the one reading of an image reference's full name:
// what every client looks an image up by.
//
// It imports nothing of cornus's.
package imageref

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// Full is ref's full name (busybox → docker.io/library/busybox:latest),
// or ref as it is when it does not parse (an image ID).
func Full(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref // an ID, which would parse as the name sha256
	}
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(n).String()
}

// RepoTag splits an image name into the registry repository it serves
// (its familiar form) and its tag; ok is false for names a registry on
// another host cannot serve (digests, untagged names, a host with a port).
func RepoTag(name string) (repo, tag string, ok bool) {
	n, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return "", "", false
	}
	t, isTagged := n.(reference.Tagged)
	repo = reference.FamiliarName(n)
	if !isTagged || strings.Contains(repo, ":") {
		return "", "", false
	}
	return repo, t.Tag(), true
}

// Repo is the repository of an image name or registry repository in its
// familiar form (app for library/app and docker.io/library/app:1), or
// name as it is when it does not parse.
func Repo(name string) string {
	n, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return name
	}
	return reference.FamiliarName(n)
}

// NameTag splits ref into its full name and tag (latest when it has none)
// for APIs that take them apart (commit's repo and tag); a digest is
// refused: a commit makes a new image, never one a digest names.
func NameTag(ref string) (name, tag string, err error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	if _, ok := n.(reference.Digested); ok {
		return "", "", fmt.Errorf("image reference %q: a digest names an existing image: give REPOSITORY[:TAG]", ref)
	}
	t := reference.TagNameOnly(n).(reference.Tagged)
	return n.Name(), t.Tag(), nil
}
