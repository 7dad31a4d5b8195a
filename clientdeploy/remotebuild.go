package clientdeploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/docker/go-units"

	"github.com/cornus-dev/cornus/builder"
	"github.com/cornus-dev/cornus/internal/imageref"
	"github.com/cornus-dev/cornus/server/api"
	"github.com/cornus-dev/cornus/spec"
)

// remoteBuild builds on the server: the context and the rest of what the
// builds read stay here and are served over a session of the build's own
// while it runs (only what the builds ask for crosses); the server's
// progress is shown here.
func (se *Session) remoteBuild(ctx context.Context, p spec.Project, services []string, o BuildOptions) ([]builder.Result, error) {
	c := se.remote.client
	sess, err := c.OpenSession(ctx, p.Name, true)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	idb := make([]byte, 16)
	_, _ = rand.Read(idb)
	id := hex.EncodeToString(idb)
	var builds []spec.Build
	for _, name := range p.ServiceNames() {
		if a := p.Services[name]; a.Build != nil && (len(services) == 0 || slices.Contains(services, name)) {
			builds = append(builds, *a.Build)
		}
	}
	sent := sess.ServeBuild(id, builds, builder.LocalFiles{Environ: se.streams.Environ})
	replay, err := builder.NewReplay(ctx, se.progressMode, se.streams.Err)
	if err != nil {
		return nil, err
	}
	c.BuildLine = func(raw json.RawMessage) { replay.Line(raw) }
	res, err := c.Build(ctx, sess.ID, api.BuildRequest{Spec: p, Services: services, BuildID: id, NoCache: o.NoCache, Pull: o.Pull, Args: o.Args})
	c.BuildLine = nil
	if rerr := replay.Close(); err == nil {
		err = rerr
	}
	if se.progressMode != "quiet" {
		// What crossed, as docker build says what it sends: the files the
		// builds read, not the context.
		fmt.Fprintf(se.streams.Err, "Build files sent to %s: %s in %d files\n", c.URL(), units.HumanSize(float64(sent.Bytes.Load())), sent.Files.Load())
	}
	var out []builder.Result
	for _, b := range res.Images {
		out = append(out, builder.Result{Service: b.Service, Image: b.Image, ID: b.ID})
	}
	return out, err
}

// remoteMissing reports whether the server has no image ref the tenant
// can see.
func (se *Session) remoteMissing(ctx context.Context, ref string) (bool, error) {
	imgs, err := se.remote.client.ListImages(ctx)
	if err != nil {
		return false, err
	}
	want := imageref.Full(ref)
	for _, img := range imgs {
		for _, t := range img.Tags {
			if imageref.Full(t) == want {
				return false, nil
			}
		}
	}
	return true, nil
}
