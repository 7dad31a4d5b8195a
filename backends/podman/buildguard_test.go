package podman

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Builds while copies, stats of paths, tops and restarts run on
// containers, through another Backend of the process (as the contract
// suite's cases and the package's other tests do): on podman 4.3 each of
// those ended a thread
// that a build's RUN step runtime died with (buildguard.go), so without
// the guard most of these builds fail with "while running runtime:
// signal: killed".
func TestBuildsBesideThreadEndingCalls(t *testing.T) {
	b, ctx := setup(t)
	other, _ := setup(t)
	c := started(t, b, unique("guard"), spec.App{Name: "app", Command: sh("sleep 600")})
	r := started(t, b, unique("guard-restart"), spec.App{Name: "app", Command: sh("sleep 600")})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls int
	var callErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if callErr = threadEndingCalls(ctx, other, c.ID, r.ID); callErr != nil {
				return
			}
			calls++
		}
	}()

	const builds = 4
	for i := range builds {
		tag := fmt.Sprintf("%s-%d", unique("guard-img"), i)
		t.Cleanup(func() { _ = b.RemoveImage(context.Background(), tag, true) })
		// A RUN step of its own per build (the build cache outlives runs).
		df := fmt.Sprintf("FROM %s\nRUN echo %s > /id && sleep 0.3\n", testRef, tag)
		_, err := b.buildNative(ctx, contextTar(t, df), backends.NativeBuild{Dockerfile: "Dockerfile", Tags: []string{tag}})
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("build %d of %d beside %d rounds of copy, stat, top and restart: %v", i+1, builds, calls, err)
		}
	}
	close(stop)
	wg.Wait()
	if callErr != nil {
		t.Fatalf("a call beside the builds: %v", callErr)
	}
	if calls == 0 {
		t.Fatal("no copy, stat, top or restart ran beside the builds: the test proved nothing")
	}
	t.Logf("%d builds beside %d rounds of copy, stat, top and restart", builds, calls)
}

// threadEndingCalls runs one of each call libpod ends a thread after: a
// copy, a stat and a top of id, a restart of restart.
func threadEndingCalls(ctx context.Context, b *Backend, id, restart string) error {
	rc, _, err := b.CopyFrom(ctx, id, "/etc/passwd")
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if _, err := b.StatPath(ctx, id, "/etc/passwd"); err != nil {
		return err
	}
	if _, err = b.Top(ctx, id, ""); err != nil {
		return err
	}
	now := time.Duration(0)
	return b.Restart(ctx, restart, backends.StopOptions{Timeout: &now})
}

// contextTar is a build context holding only a Dockerfile.
func contextTar(t *testing.T, dockerfile string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, dockerfile); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// The guard keeps the classes apart, lets a class share, and gives up
// when the context does.
func TestBuildGuard(t *testing.T) {
	var g buildGuard
	ctx := context.Background()
	b1, err := g.enter(ctx, classBuild)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := g.enter(ctx, classBuild)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := g.enter(short, classThreadEnding); err == nil {
		t.Fatal("a copy entered while builds ran")
	}
	entered := make(chan func())
	go func() {
		r, err := g.enter(ctx, classThreadEnding)
		if err != nil {
			t.Error(err)
		}
		entered <- r
	}()
	b1()
	b1() // a second release is a no-op
	select {
	case <-entered:
		t.Fatal("a copy entered while a build still ran")
	case <-time.After(50 * time.Millisecond):
	}
	b2()
	copy1 := <-entered

	// A build waits for the copy; a new copy must not overtake it.
	built := make(chan func())
	go func() {
		r, err := g.enter(ctx, classBuild)
		if err != nil {
			t.Error(err)
		}
		built <- r
	}()
	for waiting := 0; waiting == 0; {
		time.Sleep(time.Millisecond)
		g.mu.Lock()
		waiting = g.waiting[classBuild]
		g.mu.Unlock()
	}
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	if _, err := g.enter(short2, classThreadEnding); err == nil {
		t.Fatal("a copy overtook a waiting build")
	}
	copy1()
	(<-built)()
}

func TestBuildsDieWithThreads(t *testing.T) {
	for v, want := range map[string]bool{"4.3.1": true, "4.5.9": true, "4.6.0": false, "4.9.3": false, "5.0.0-rc1": false, "": true, "dev": true} {
		if got := buildsDieWithThreads(v); got != want {
			t.Errorf("buildsDieWithThreads(%q) = %v, want %v", v, got, want)
		}
	}
}
