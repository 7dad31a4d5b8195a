package kubernetes

import (
	"context"
	"fmt"
	"io"
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
