package kubernetes

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cornus-dev/cornus/backends"
)

// Logs copies the container's output from the kubelet (pods/log). The
// API interleaves stdout and stderr unless the cluster enables split
// streams (the PodLogsQuerySplitStreams feature): then, when the caller
// wants them apart and no tail, each goes to its writer; otherwise both go
// to Stdout. A container that has no pod (stopped) has no logs left: the
// kubelet deletes them with the pod.
//
// When the kubelet answers that it cannot retrieve the logs (a run it just
// replaced), the state is read again and the logs asked for again.
func (b *Backend) Logs(ctx context.Context, id string, o backends.LogOptions) error {
	for attempt := 1; ; attempt++ {
		err := b.logs(ctx, id, o)
		if !errors.Is(err, errRunGone) {
			return err
		}
		if attempt == 5 {
			return nil // the kubelet keeps no logs of that run
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
}

func (b *Backend) logs(ctx context.Context, id string, o backends.LogOptions) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.pod == nil || o.Stdout == nil {
		return nil
	}
	st := stateOf(c.pod)
	base := corev1.PodLogOptions{
		Container: c.rec.Pod.Containers[0].Name, Follow: o.Follow, Timestamps: o.Timestamps || !o.Until.IsZero(),
		// The current run has not started (restarting): the last one's.
		Previous: st.waitingReason != "" && st.restartCount > 0,
	}
	if !o.Since.IsZero() {
		base.SinceTime = &metav1.Time{Time: o.Since}
	}
	if o.Tail >= 0 {
		base.TailLines = ptr(int64(o.Tail))
	}
	split := o.Stderr != nil && o.Stderr != o.Stdout && o.Tail < 0
	if split {
		err := b.splitLogs(ctx, c, base, o)
		if !errors.Is(err, errNoSplit) {
			return err
		}
	}
	return b.copyLogs(ctx, c, base, o.Stdout, o)
}

// errNoSplit: the cluster does not split log streams.
var errNoSplit = errors.New("log streams are not split by this cluster")

func (b *Backend) splitLogs(ctx context.Context, c container, base corev1.PodLogOptions, o backends.LogOptions) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range []struct {
		stream string
		w      io.Writer
	}{{corev1.LogStreamStdout, o.Stdout}, {corev1.LogStreamStderr, o.Stderr}} {
		opts := base
		opts.Stream = ptr(s.stream)
		g.Go(func() error { return b.copyLogs(gctx, c, opts, s.w, o) })
	}
	err := g.Wait()
	var se apierrors.APIStatus
	if errors.As(err, &se) && (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) &&
		(strings.Contains(err.Error(), "stream") || strings.Contains(err.Error(), "PodLogsQuerySplitStreams")) {
		return errNoSplit
	}
	return err
}

// copyLogs streams one log request to w (dropping lines after o.Until and
// the timestamps added to find them).
func (b *Backend) copyLogs(ctx context.Context, c container, opts corev1.PodLogOptions, w io.Writer, o backends.LogOptions) error {
	rc, err := b.core.Pods(b.cfg.namespace).GetLogs(c.obj(), &opts).Stream(ctx)
	if err != nil {
		if apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "ContainerCreating") {
			return nil // no output yet
		}
		return wrap(err, "logs of %s", c.rec.Name)
	}
	defer rc.Close()
	r, err := screenNotice(rc)
	if err != nil {
		return err
	}
	if o.Until.IsZero() {
		_, err = io.Copy(w, r)
	} else {
		err = untilCopy(w, r, o.Until, o.Timestamps)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s: %w", c.rec.Name, err)
	}
	return nil
}

// errRunGone: the kubelet answered, as the whole log, that it cannot
// retrieve the logs of the run (one it just replaced, or whose log it
// removed).
var errRunGone = errors.New("the kubelet cannot retrieve the logs of that run")

// kubeletNotice starts what the kubelet answers (status 200) instead of a
// log it cannot retrieve; the container's ID follows, with no newline.
const kubeletNotice = "unable to retrieve container logs for "

// screenNotice reads the start of a log stream: errRunGone when the whole
// stream is the kubelet's notice, else a reader of all of it. It reads no
// further than the notice could go, so a followed log is not held back.
func screenNotice(r io.Reader) (io.Reader, error) {
	var head []byte
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		head = append(head, buf[:n]...)
		if !couldBeNotice(head) {
			return io.MultiReader(bytes.NewReader(head), r), nil
		}
		switch {
		case errors.Is(err, io.EOF):
			if len(head) > len(kubeletNotice) {
				return nil, errRunGone
			}
			return bytes.NewReader(head), nil
		case err != nil:
			return io.MultiReader(bytes.NewReader(head), errReader{err}), nil
		}
	}
}

// couldBeNotice says whether head is the kubelet's notice or its start.
func couldBeNotice(head []byte) bool {
	if len(head) <= len(kubeletNotice) {
		return strings.HasPrefix(kubeletNotice, string(head))
	}
	id := head[len(kubeletNotice):]
	return bytes.HasPrefix(head, []byte(kubeletNotice)) && len(id) < 256 && !bytes.ContainsAny(id, " \t\r\n")
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// untilCopy copies timestamped lines up to until, keeping the timestamps
// only when asked for.
func untilCopy(w io.Writer, r io.Reader, until time.Time, keep bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		ts, rest, _ := strings.Cut(line, " ")
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil && t.After(until) {
			return nil
		}
		if !keep {
			line = rest
		}
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return sc.Err()
}
