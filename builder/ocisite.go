package builder

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/errdefs"
	"github.com/distribution/reference"
	bkclient "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/envlist"
)

// ociSite is a buildkitd with its OCI worker: it sees no backend's
// images, so the bases a Dockerfile names are handed to it from the
// backend's store (named contexts over the session), and results come
// back as docker-archives loaded into the backend.
type ociSite struct {
	d       *buildkitd // nil with CORNUS_BUILDKIT_ADDRESS
	c       *bkclient.Client
	images  backends.Images
	content backends.ImageContenter // nil: bases come from registries
}

func newOCISite(ctx context.Context, b backends.Backend, environ []string) (*ociSite, error) {
	images, err := backends.Want[backends.Images](b, backends.FeatureImages, "building images")
	if err != nil {
		return nil, err
	}
	s := &ociSite{images: images}
	s.content, _ = backends.Want[backends.ImageContenter](b, backends.FeatureContent, "image content")
	addr := envlist.Get(environ, EnvBuildkitAddress)
	if addr == "" {
		if s.d, err = startBuildkitd(ctx, environ, ociWorker(b.Name())); err != nil {
			return nil, err
		}
		addr = s.d.address()
	}
	if s.c, err = bkclient.New(ctx, addr); err != nil {
		_ = s.close()
		return nil, fmt.Errorf("connect to buildkitd at %s: %w", addr, err)
	}
	return s, nil
}

func (s *ociSite) build(ctx context.Context, j job, src *source, r run) (string, error) {
	return solve(ctx, s, j, src, r)
}

func (s *ociSite) client(context.Context) (*bkclient.Client, error) { return s.c, nil }

// prepare hands the build every image it reads (FROM, COPY --from, RUN
// --mount from=) that the backend's store has, as an OCI layout named
// context; one it does not have is left to the builder (a registry,
// when one is reachable).
func (s *ociSite) prepare(ctx context.Context, j job, src *source, args map[string]string) error {
	if s.content == nil {
		return nil
	}
	df, err := readDockerfile(src)
	if err != nil {
		return err
	}
	images, err := imagesRead(df, frontendArgs(j, args))
	if err != nil {
		return err
	}
	for name, v := range src.refs {
		if ref, ok := strings.CutPrefix(v, "docker-image://"); ok {
			if err := s.handOver(ctx, src, name, ref); err != nil {
				return err
			}
		}
	}
	for _, ref := range images {
		key, err := contextKey(ref)
		if err != nil {
			return fmt.Errorf("image %s: %w", ref, err)
		}
		_, dir := src.named[key]
		if _, named := src.refs[key]; named || dir {
			continue // an additional context of that name wins, as in docker build
		}
		if err := s.handOver(ctx, src, key, ref); err != nil {
			return err
		}
	}
	return nil
}

// handOver makes context name read image ref from the backend's store.
func (s *ociSite) handOver(ctx context.Context, src *source, name, ref string) error {
	ic, err := s.content.ImageContent(ctx, ref)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("base image %s: %w", ref, err)
	}
	src.onCleanup(ic.Release)
	store, err := scopedStore(ctx, ic.Store, ic.Target)
	if err != nil {
		return fmt.Errorf("base image %s: %w", ref, err)
	}
	id := fmt.Sprintf("cornus%d", len(src.stores))
	if src.stores == nil {
		src.stores = map[string]content.Store{}
	}
	src.stores[id] = store
	src.refs[name] = "oci-layout://" + id + "@" + ic.Target.Digest.String()
	return nil
}

// contextKey is the named-context key the Dockerfile frontend looks up
// for a FROM reference: its familiar form, without ":latest".
func contextKey(ref string) (string, error) {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(reference.FamiliarString(n), ":latest"), nil
}

func readDockerfile(src *source) ([]byte, error) {
	data, err := readFS(src.dockerfile, src.filename)
	if err != nil {
		return nil, fmt.Errorf("dockerfile: %w", err)
	}
	return data, nil
}

// export streams the result as a docker-archive into the backend's
// LoadImage while the solve runs.
func (s *ociSite) export(ctx context.Context, tags []string) export {
	pr, pw := io.Pipe()
	var loadErr error
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		_, loadErr = s.images.LoadImage(ctx, pr)
		_ = pr.CloseWithError(loadErr) // unblock the exporter if the load ends first
	}()
	return export{
		entries: []bkclient.ExportEntry{{
			Type:   bkclient.ExporterDocker,
			Attrs:  map[string]string{"name": strings.Join(tags, ",")},
			Output: func(map[string]string) (io.WriteCloser, error) { return pw, nil },
		}},
		finish: func(_ context.Context, r *bkclient.SolveResponse) (string, error) {
			_ = pw.Close()
			if <-loaded; loadErr != nil {
				return "", fmt.Errorf("load the built image: %w", loadErr)
			}
			return r.ExporterResponse[exptypes.ExporterImageConfigDigestKey], nil
		},
		abort: func(err error) {
			_ = pw.CloseWithError(err) // the load fails with it; the solve's error is reported
			<-loaded
		},
	}
}

func (s *ociSite) close() error {
	var err error
	if s.c != nil {
		err = s.c.Close()
	}
	if s.d != nil {
		if derr := s.d.close(); err == nil {
			err = derr
		}
	}
	return err
}
