package clientdeploy

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/containerd/errdefs"
	"github.com/docker/go-units"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/fromenv"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/spec"
)

// sendImages loads into the server the images up runs that the server
// lacks and this machine has, as `cornus image load --server` would: a
// developer's own images reach a remote server (and, on kubernetes, the
// nodes, through the server's registry) with no registry of their own.
// This machine's images are its local backend's (CORNUS_DEPLOY_BACKEND's
// as for a local up: dockerd by default), read only if one is missing on
// the server. Built services are the server's to build; pull_policy
// always and build leave the image to the server.
func (se *Session) sendImages(ctx context.Context, p spec.Project, o Options) error {
	names, err := engine.Selected(p, o.Up.Services, o.Up.NoDeps)
	if err != nil {
		return err
	}
	var want []string
	for _, n := range names {
		a := p.Services[n]
		kind, _, _ := spec.ParsePullPolicy(a.PullPolicy)
		if a.Image == "" || a.Build != nil || kind == spec.PullAlways || kind == spec.PullBuild {
			continue
		}
		want = append(want, a.Image)
	}
	if len(want) == 0 {
		return nil
	}
	have, err := se.remote.client.ListImages(ctx)
	if err != nil {
		return err
	}
	onServer := map[string]bool{}
	for _, img := range have {
		for _, t := range img.Tags {
			onServer[imageref.Full(t)] = true
		}
	}
	var local localImages
	defer local.close()
	for _, ref := range want {
		if onServer[imageref.Full(ref)] {
			continue
		}
		// The list may not be whole (kubernetes lists the images its pods
		// use unless it may read nodes): ask for this one.
		if _, err := se.remote.client.InspectImage(ctx, ref); err == nil {
			continue
		} else if !errdefs.IsNotFound(err) {
			return fmt.Errorf("image %s on %s: %w", ref, se.remote.client.URL(), err)
		}
		if err := se.sendImage(ctx, &local, ref); err != nil {
			return err
		}
		onServer[imageref.Full(ref)] = true
	}
	return nil
}

// sendImage loads ref from this machine's store into the server, if this
// machine has it.
func (se *Session) sendImage(ctx context.Context, local *localImages, ref string) error {
	imgs, saver := local.open(ctx, se.streams.Environ)
	if saver == nil {
		return nil // no store here to send from: the server pulls, or says what is missing
	}
	if _, err := imgs.InspectImage(ctx, ref); errdefs.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("image %s on this machine: %w", ref, err)
	}
	pr, pw := io.Pipe()
	var sent atomic.Int64
	go func() { pw.CloseWithError(saver.SaveImage(ctx, ref, countWriter{pw, &sent})) }()
	_, err := se.remote.client.LoadImage(ctx, pr)
	_ = pr.CloseWithError(err)
	if err != nil {
		return fmt.Errorf("send image %s to %s: %w", ref, se.remote.client.URL(), err)
	}
	if se.progressMode != "quiet" {
		fmt.Fprintf(se.streams.Err, "Image %s sent to %s (%s): the server did not have it\n", ref, se.remote.client.URL(), units.HumanSize(float64(sent.Load())))
	}
	return nil
}

// localImages is this machine's image store, opened once when first
// needed; nil parts when there is none that can export images.
type localImages struct {
	opened bool
	b      backends.Backend
	imgs   backends.Images
	saver  backends.ImageSaver
}

func (l *localImages) open(ctx context.Context, environ []string) (backends.Images, backends.ImageSaver) {
	if !l.opened {
		l.opened = true
		b, err := fromenv.Open(ctx, environ)
		if err != nil {
			return nil, nil // no local backend running: nothing to send
		}
		l.b = b
		l.imgs, _ = backends.Want[backends.Images](b, backends.FeatureImages, "images")
		l.saver, _ = b.(backends.ImageSaver)
		if l.imgs == nil {
			l.saver = nil
		}
	}
	return l.imgs, l.saver
}

func (l *localImages) close() {
	if l.b != nil {
		_ = l.b.Close()
	}
}

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
