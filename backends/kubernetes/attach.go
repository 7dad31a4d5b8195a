package kubernetes

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cornus-dev/cornus/backends"
)

// attachBeforeStart serves an attach to a container that has no pod yet:
// Docker clients attach first and start the container once the attach is
// answered (docker run, docker compose run, the devcontainer CLI). There
// is nothing to attach to until Start makes the pod, so the attach is
// answered at once; then, when the container has run, its output is the
// pod's log followed from the beginning (so nothing printed before a live
// stream could exist is lost, even from a container that has exited by
// then) and stdin, if wanted, goes through the attach subresource.
func (b *Backend) attachBeforeStart(ctx context.Context, id string, o backends.AttachOptions) error {
	if o.Attached != nil {
		o.Attached()
	}
	if !o.Stream {
		return nil
	}
	c, err := b.awaitRun(ctx, id)
	if err != nil {
		if errdefs.IsNotFound(err) || ctx.Err() != nil {
			return nil // removed before it ran, or the caller left
		}
		return err
	}
	ct := c.rec.Pod.Containers[0]
	if o.Stdin != nil && ct.Stdin {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go b.attachStdin(sctx, cancel, c, ct, o.Stdin)
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return b.Logs(ctx, id, backends.LogOptions{Follow: true, Tail: -1, Stdout: stdout, Stderr: stderr})
}

// awaitRun waits until the container's pod exists and its container has
// run (running, or already exited).
func (b *Backend) awaitRun(ctx context.Context, id string) (container, error) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := b.find(ctx, id)
		if err != nil {
			return container{}, err
		}
		if c.pod != nil && stateOf(c.pod).state != backends.StateCreated {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return container{}, fmt.Errorf("attach to %s: %w", c.rec.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// attachStdin copies stdin to the running container (its output comes
// from the log). A container that exited already has no stdin; that is
// not an error of the attach.
func (b *Backend) attachStdin(ctx context.Context, cancel context.CancelFunc, c container, ct corev1.Container, stdin io.Reader) {
	opts := &corev1.PodAttachOptions{Container: ct.Name, Stdin: true, TTY: ct.TTY}
	req := b.core.RESTClient().Post().Namespace(b.cfg.namespace).Resource("pods").Name(c.obj()).SubResource("attach").
		VersionedParams(opts, b.params)
	ex, err := b.executor(req)
	if err != nil {
		return
	}
	in := &eofReader{r: stdin, eof: func() {
		if !ct.StdinOnce {
			time.AfterFunc(300*time.Millisecond, cancel)
		}
	}}
	_ = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: in, Tty: ct.TTY})
}

// Attach streams the running container's stdio through the pod's attach
// subresource. When the caller's stdin ends, its session ends too (the
// container's stdin stays open), unless the container closes its stdin
// after the first session (stdinOnce).
func (b *Backend) Attach(ctx context.Context, id string, o backends.AttachOptions) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.pod == nil {
		return b.attachBeforeStart(ctx, id, o)
	}
	if stateOf(c.pod).state != backends.StateRunning {
		return fmt.Errorf("attach to %s: the container is not running: %w", c.rec.Name, errdefs.ErrConflict)
	}
	ct := c.rec.Pod.Containers[0]
	if o.Logs && o.Stdout != nil {
		if err := b.Logs(ctx, id, backends.LogOptions{Tail: -1, Stdout: o.Stdout, Stderr: o.Stderr}); err != nil {
			return err
		}
	}
	if !o.Stream {
		return nil
	}
	stdin := o.Stdin
	if !ct.Stdin {
		stdin = nil
	}
	opts := &corev1.PodAttachOptions{Container: ct.Name, Stdin: stdin != nil, Stdout: o.Stdout != nil, Stderr: o.Stderr != nil && !ct.TTY, TTY: ct.TTY}
	req := b.core.RESTClient().Post().Namespace(b.cfg.namespace).Resource("pods").Name(c.obj()).SubResource("attach").
		VersionedParams(opts, b.params)
	ex, err := b.executor(req)
	if err != nil {
		return fmt.Errorf("attach to %s: %w", c.rec.Name, err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	so := remotecommand.StreamOptions{Stdout: o.Stdout, Tty: ct.TTY}
	if opts.Stderr {
		so.Stdout, so.Stderr = serialized(o.Stdout, o.Stderr)
	}
	if stdin != nil {
		so.Stdin = &eofReader{r: stdin, eof: func() {
			if !ct.StdinOnce {
				// Let what was typed reach the container, then end.
				time.AfterFunc(300*time.Millisecond, cancel)
			}
		}}
	}
	if ct.TTY && o.Resize != nil {
		so.TerminalSizeQueue = newSizeQueue(actx, nil, o.Resize)
	}
	if o.Attached != nil {
		o.Attached()
	}
	err = ex.StreamWithContext(actx, so)
	if err != nil && actx.Err() != nil && ctx.Err() == nil {
		return nil // ended with the caller's stdin
	}
	if err != nil {
		return fmt.Errorf("attach to %s: %w", c.rec.Name, translate(err))
	}
	return nil
}

// eofReader calls eof once when r ends.
type eofReader struct {
	r    io.Reader
	eof  func()
	once sync.Once
}
