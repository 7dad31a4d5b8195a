package podman

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Podman before 4.6 (buildah before 1.31) starts a build's RUN step
// runtime with a parent-death signal armed from whichever OS thread the Go
// runtime ran the build goroutine on. Libpod's archive (copy and stat) and
// top handlers enter the container's namespaces on a locked thread and
// leave it locked, so Go ends that thread when they return; if it is the
// one that started the runtime, the kernel SIGKILLs the runtime and the
// step fails with "while running runtime: signal: killed". Starting a
// container does it too (its network namespace is made on a thread left
// locked). Measured here with podman 4.3.1: 34 of 40 builds failed while
// `podman cp` looped, 2 of 20 while `run --rm` or start/stop looped, none
// while create, stop, exec, stats, pause or network connect did
// (containers/podman#17918, fixed by containers/buildah#4813).
//
// cornus cannot keep other clients from doing it, but it never does it to
// its own builds: on those versions its copies, stats of paths, tops,
// starts and restarts wait until its running builds end, and a build
// waits for them, across every Backend of the process that speaks to the
// same service. Another process's copy or start can still kill a build.

// threadSafeBuilds is the first podman whose builds survive a thread's end.
const threadSafeBuilds = 4*1000 + 6

// buildGuard keeps builds and thread-ending calls apart: any number of
// one class at once, never both. A class with callers waiting gets its
// turn once the other drains: an endless stream of copies (a loop of
// `cp`) must not starve a build, nor the other way round.
type buildGuard struct {
	mu      sync.Mutex
	active  [2]int        // running calls per class
	waiting [2]int        // calls per class waiting to enter
	turn    int           // the class that goes first when both wait
	changed chan struct{} // closed (and replaced) when the counts change
}

// Classes of calls the guard keeps apart.
const (
	classBuild = iota
	classThreadEnding
)

// enter waits until class may run and counts one call of it in; release
// counts it out.
func (g *buildGuard) enter(ctx context.Context, class int) (release func(), err error) {
	other := 1 - class
	g.mu.Lock()
	g.waiting[class]++
	for {
		// Join the running calls of its class only while the other class
		// has nobody waiting; else only on its turn, once the other drains.
		if g.active[other] == 0 && (g.waiting[other] == 0 || g.active[class] == 0 && g.turn == class) {
			g.waiting[class]--
			g.active[class]++
			g.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { g.leave(class) }) }, nil
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		wait := g.changed
		g.mu.Unlock()
		select {
		case <-wait:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			g.waiting[class]--
			g.signal()
			g.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

func (g *buildGuard) leave(class int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active[class]--
	if g.active[class] == 0 {
		g.turn = 1 - class
		g.signal()
	}
}

// signal wakes every waiter to look again; g.mu is held.
func (g *buildGuard) signal() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// guard enters class when this podman needs it (or its version is not
// known yet); release is a no-op otherwise.
func (b *Backend) guard(ctx context.Context, class int) (release func(), err error) {
	if info, err := b.hostInfo(ctx); err == nil && !buildsDieWithThreads(info.Version.Version) {
		return func() {}, nil
	}
	return guardOf(b.Endpoint()).enter(ctx, class)
}

// guards are the process's guards, one per podman endpoint: every Backend
// of the process that speaks to one service keeps to one guard.
var (
	guardsMu sync.Mutex
	guards   = map[string]*buildGuard{}
)

func guardOf(endpoint string) *buildGuard {
	guardsMu.Lock()
	defer guardsMu.Unlock()
	g := guards[endpoint]
	if g == nil {
		g = &buildGuard{}
		guards[endpoint] = g
	}
	return g
}

// buildsDieWithThreads reports whether a podman of version v has the bug.
func buildsDieWithThreads(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return true
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return major*1000+minor < threadSafeBuilds
}

// threadEnding makes a call that may end the OS thread libpod serves it
// on (a start, a restart), kept apart from builds.
func (b *Backend) threadEnding(ctx context.Context, req request) error {
	release, err := b.guard(ctx, classThreadEnding)
	if err != nil {
		return err
	}
	defer release()
	return b.cli.call(ctx, req, nil)
}

// guardedBody releases the guard when a streamed answer is closed.
type guardedBody struct {
	io.ReadCloser
	release func()
}

func (g guardedBody) Close() error {
	defer g.release()
	return g.ReadCloser.Close()
}
