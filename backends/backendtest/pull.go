package backendtest

import (
	"bytes"
	"context"
	"net"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/internal/testimage"
)

func init() {
	featureCases = append(featureCases, featureCase{feature: backends.FeaturePull,
		name: "pull: an unreachable registry is a clear error; a loopback registry's image runs", run: pullCase})
}

// pullCase pulls only from 127.0.0.1: a port nothing listens on, and
// (where the backend speaks plain HTTP to loopback registries) a registry
// the test serves.
func pullCase(x *env) {
	pl, _ := backends.Want[backends.Puller](x.b, backends.FeaturePull, "pull")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		x.t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	ref := closed + "/cornus-test/unreachable:1"
	ctx, cancel := context.WithTimeout(x.ctx, 2*time.Minute)
	defer cancel()
	begin := time.Now()
	err = pl.PullImage(ctx, ref, nil)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), closed) {
		x.t.Fatalf("pull from a registry nothing listens on (%s): want an error naming it within 2 minutes, got %v after %v", closed, err, time.Since(begin))
	}
	x.t.Logf("unreachable registry, after %v: %v", time.Since(begin).Round(time.Millisecond), err)

	if !x.b.Capabilities().LoopbackRegistries {
		x.t.Logf("the %s backend does not declare pulls from loopback registries", x.b.Name())
		return
	}
	var archive bytes.Buffer
	// A file of this run's makes the layer one no runtime holds already.
	mark := "etc/cornus-pulled"
	if err := testimage.BuildBusybox(&archive, testimage.Options{Ref: "cornus-test/pull-src:1", Files: map[string]string{mark: x.project}}); err != nil {
		x.t.Fatal(err)
	}
	reg, err := serveRegistry(archive.Bytes())
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(reg.close)
	pulled := reg.host + "/cornus-test/pulled:" + x.project
	x.t.Cleanup(func() {
		// The project's containers go first, then the image they ran.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = x.e.Down(ctx, x.project, engine.DownOptions{})
		if err := x.images().RemoveImage(ctx, pulled, true); err != nil {
			x.t.Errorf("cleanup: remove %s: %v", pulled, err)
		}
	})
	if err := pl.PullImage(x.ctx, pulled, nil); err != nil {
		x.t.Fatalf("pull %s: %v", pulled, err)
	}
	if reg.fetched.Load() == 0 {
		x.t.Fatal("the pull fetched no blob from the test's registry")
	}
	if _, err := x.images().InspectImage(x.ctx, pulled); err != nil {
		x.t.Fatalf("inspect after the pull: %v", err)
	}
	a := sleeper("app")
	a.Image, a.PullPolicy = pulled, "never"
	x.up(x.proj(a))
	if out := x.mustSh("app", "cat /"+mark); out != x.project {
		x.t.Fatalf("the container of the pulled image reads %q in /%s, want %q", out, mark, x.project)
	}
}
