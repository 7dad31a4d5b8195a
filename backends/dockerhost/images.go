package dockerhost

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/api/types/registry"
	"github.com/moby/moby/client"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// InspectImage returns a local image, or an errdefs.NotFound error.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	res, err := b.cli.ImageInspect(ctx, ref)
	if err != nil {
		return backends.Image{}, wrap(err, "inspect image %s", ref)
	}
	return imageDetails(res.InspectResponse), nil
}

func imageDetails(r image.InspectResponse) backends.Image {
	img := backends.Image{
		ID: r.ID, Tags: r.RepoTags, Digests: r.RepoDigests, Size: r.Size,
		Created: parseTime(r.Created), Architecture: r.Architecture, OS: r.Os,
	}
	img.LastTagged = r.Metadata.LastTagTime
	if c := r.Config; c != nil {
		img.Entrypoint = c.Entrypoint
		img.Cmd = c.Cmd
		img.Env = c.Env
		img.WorkingDir = c.WorkingDir
		img.User = c.User
		img.Labels = c.Labels
		img.Healthcheck = specHealthcheck(c.Healthcheck)
		img.OnBuild = c.OnBuild
		for p := range c.ExposedPorts {
			img.ExposedPorts = append(img.ExposedPorts, p)
		}
		slices.Sort(img.ExposedPorts)
	}
	return img
}

// ListImages returns every local image (untagged ones without tags).
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	res, err := b.cli.ImageList(ctx, client.ImageListOptions{})
	if err != nil {
		return nil, wrap(err, "list images")
	}
	out := make([]backends.Image, 0, len(res.Items))
	for _, s := range res.Items {
		out = append(out, backends.Image{
			ID:      s.ID,
			Tags:    slices.DeleteFunc(slices.Clone(s.RepoTags), func(t string) bool { return t == "<none>:<none>" }),
			Digests: slices.DeleteFunc(slices.Clone(s.RepoDigests), func(d string) bool { return d == "<none>@<none>" }),
			Size:    s.Size,
			Created: time.Unix(s.Created, 0),
			Labels:  s.Labels,
		})
	}
	return out, nil
}

// RemoveImage untags and deletes an image (and its untagged parents).
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	_, err := b.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: force, PruneChildren: true})
	return wrap(err, "remove image %s", ref)
}

// LoadImage imports a docker-archive or OCI-layout tar and returns the
// references it created ("Loaded image: X", or the ID for untagged
// images).
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	rc, err := b.cli.ImageLoad(ctx, tar, client.ImageLoadWithQuiet(true))
	if err != nil {
		return nil, wrap(err, "load image")
	}
	defer rc.Close()
	refs, err := loadedRefs(rc)
	return refs, wrap(err, "load image")
}

// loadedRefs parses the load stream's "Loaded image: X" and "Loaded image
// ID: X" lines.
func loadedRefs(r io.Reader) ([]string, error) {
	var refs []string
	err := decodeMessages(r, func(m jsonstream.Message) {
		for _, line := range strings.Split(m.Stream, "\n") {
			line = strings.TrimSpace(line)
			for _, prefix := range []string{"Loaded image ID: ", "Loaded image: "} {
				if ref, ok := strings.CutPrefix(line, prefix); ok && ref != "" {
					refs = append(refs, ref)
					break
				}
			}
		}
	})
	return refs, err
}

// PullImage pulls ref from its registry, reporting progress.
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	rc, err := b.cli.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err != nil {
		return wrap(err, "pull image %s", ref)
	}
	defer rc.Close()
	return wrap(decodePull(rc, progress), "pull image %s", ref)
}

// decodePull reads the daemon's JSON message stream; an error message in
// it fails the pull.
func decodePull(r io.Reader, progress func(backends.PullProgress)) error {
	return decodeMessages(r, func(m jsonstream.Message) {
		if progress == nil {
			return
		}
		p := backends.PullProgress{ID: m.ID, Status: m.Status}
		if m.Progress != nil {
			p.Current, p.Total = m.Progress.Current, m.Progress.Total
		}
		progress(p)
	})
}

// decodeMessages calls fn for each message of a JSON message stream and
// returns the first error message the stream carries.
func decodeMessages(r io.Reader, fn func(jsonstream.Message)) error {
	dec := json.NewDecoder(r)
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read progress stream: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		fn(m)
	}
}

// PushImage pushes a local image to its registry with auth alone
// (dockerd reads no logins of its own: the docker CLI sends them).
func (b *Backend) PushImage(ctx context.Context, ref string, auth spec.RegistryAuth, progress func(backends.PullProgress)) error {
	var header string
	if auth != (spec.RegistryAuth{}) {
		js, err := json.Marshal(registry.AuthConfig{Username: auth.Username, Password: auth.Password, IdentityToken: auth.IdentityToken})
		if err != nil {
			return err
		}
		header = base64.URLEncoding.EncodeToString(js)
	}
	rc, err := b.cli.ImagePush(ctx, ref, client.ImagePushOptions{RegistryAuth: header})
	if err != nil {
		return wrap(err, "push image %s", ref)
	}
	defer rc.Close()
	return wrap(decodePull(rc, progress), "push image %s", ref)
}
