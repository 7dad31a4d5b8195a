package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// Start runs the container: it creates its pod (a finished one of an
// earlier run is replaced) and waits until the container has started, or
// fails with what keeps it from starting (an image that cannot be pulled,
// a pod the scheduler cannot place, a refused sysctl, ...). Then the
// container's names resolve on its networks (endpoints.go).
func (b *Backend) Start(ctx context.Context, id string) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.stoppedOf != nil {
		return b.startStopped(ctx, c)
	}
	if c.cm == nil {
		return b.startReplica(c)
	}
	if c.pod != nil {
		st := stateOf(c.pod)
		finished := c.pod.DeletionTimestamp != nil || c.pod.Status.Phase == corev1.PodSucceeded || c.pod.Status.Phase == corev1.PodFailed
		if !finished {
			return b.awaitStart(ctx, c) // running, or being started
		}
		// Started again: the finished pod's run becomes the past.
		if err := b.saveState(ctx, c, func(ls *lastState) { fromPod(ls, st) }); err != nil {
			return err
		}
		if err := b.deletePod(ctx, c.obj(), 0, nil); err != nil {
			return err
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: c.obj(), Labels: c.podLabels(),
			Annotations:     map[string]string{annLabels: c.cm.Annotations[annLabels], annName: c.rec.Name, annEventID: c.rec.ID},
			OwnerReferences: []metav1.OwnerReference{ownerRef(c.cm)},
		},
		Spec: *c.rec.Pod.DeepCopy(),
	}
	for try := 0; ; try++ {
		c.pod, err = b.core.Pods(b.cfg.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || try > 0 {
			return wrap(err, "start %s (create pod %s)", c.rec.Name, c.obj())
		}
		// A pod of this name is still going away (a removed container's).
		if err := b.deletePod(ctx, c.obj(), 0, nil); err != nil {
			return err
		}
	}
	return b.awaitStart(ctx, c)
}

const sigterm, sigkill = 15, 9

// Stop stops the container the way Docker does, then removes its pod
// (keeping the record, which reports the run's exit): SIGTERM (the pod's
// deletion, with the grace period as its terminationGracePeriodSeconds),
// or another stop signal sent inside the container (kill; the kubelet
// knows only SIGTERM) and waited for up to the grace period, before the
// deletion ends the rest.
func (b *Backend) Stop(ctx context.Context, id string, o backends.StopOptions) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.pod == nil || stateOf(c.pod).state == backends.StateExited {
		return nil // not running: nothing to stop (a finished pod keeps its logs)
	}
	if c.cm == nil {
		if err := b.releaseReplica(ctx, c); err != nil {
			return err
		}
	}
	grace := 10 * time.Second
	if c.rec.Pod.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*c.rec.Pod.TerminationGracePeriodSeconds) * time.Second
	}
	if o.Timeout != nil {
		grace = max(*o.Timeout, 0)
	}
	sig := int(cmp.Or(o.Signal, spec.SignalOr(c.rec.Config.StopSignal, sigterm)))
	begin := time.Now()
	var final *podState
	if sig != sigterm && sig != sigkill && stateOf(c.pod).state == backends.StateRunning && c.cm != nil {
		// (A workload's replica is being deleted already: its preStop
		// hook sends the signal.)
		if err := b.signal(ctx, c, sig); err == nil {
			final = b.awaitExit(ctx, c, begin, grace)
		}
	}
	rest := grace - time.Since(begin)
	if sig == sigkill || final != nil || rest < 0 {
		rest = 0
	}
	if err := b.deletePod(ctx, c.obj(), rest, func(st podState) {
		if final == nil && !st.finishedAt.IsZero() {
			final = &st
		}
	}); err != nil {
		return fmt.Errorf("stop %s: %w", c.rec.Name, err)
	}
	st := podState{exitCode: 128 + sigkill, finishedAt: time.Now().UTC()}
	if final != nil {
		st = *final
	}
	save := func() error { return b.saveState(ctx, c, func(ls *lastState) { fromPod(ls, st) }) }
	if c.cm == nil {
		save = func() error { return b.noteStopped(ctx, c, st) }
	}
	if err := save(); err != nil {
		return err
	}
	code := st.exitCode
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "die", &code)
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "stop", nil)
	return nil
}

// awaitExit waits up to grace for the running container to exit after a
// signal, returning its exit (nil if it did not).
func (b *Backend) awaitExit(ctx context.Context, c container, since time.Time, grace time.Duration) *podState {
	wctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	var final *podState
	_ = b.watchPod(wctx, c.obj(), func(p *corev1.Pod) (bool, error) {
		if p == nil {
			return true, nil
		}
		if t := lastExit(p); t != nil && !t.finishedAt.Before(since.Add(-time.Second)) {
			final = t
			return true, nil
		}
		return false, nil
	})
	return final
}

// lastExit is the latest finished run of the pod's container: the current
// one if it has exited, else the one before a restart.
func lastExit(p *corev1.Pod) *podState {
	if len(p.Status.ContainerStatuses) == 0 {
		return nil
	}
	cs := p.Status.ContainerStatuses[0]
	t := cs.State.Terminated
	if t == nil {
		t = cs.LastTerminationState.Terminated
	}
	if t == nil {
		return nil
	}
	return &podState{
		exitCode: int(t.ExitCode), startedAt: t.StartedAt.Time, finishedAt: t.FinishedAt.Time,
		oomKilled: t.Reason == "OOMKilled", restartCount: int(cs.RestartCount),
	}
}

// signal sends sig to the container's main process from inside it.
func (b *Backend) signal(ctx context.Context, c container, sig int) error {
	init := c.rec.Pod.ShareProcessNamespace != nil && *c.rec.Pod.ShareProcessNamespace
	var out strings.Builder
	code, err := b.execIn(ctx, c, backends.ExecOptions{Cmd: killCommand(sig, init), Stdout: &out, Stderr: &out})
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("signal %d to %s: kill exited %d: %s: %w", sig, c.rec.Name, code, strings.TrimSpace(out.String()), errdefs.ErrUnknown)
	}
	return nil
}

// deletePod deletes a pod with a grace period and waits until it is gone,
// passing each finished run the watch sees to seen (nil: not needed).
func (b *Backend) deletePod(ctx context.Context, name string, grace time.Duration, seen func(podState)) error {
	pods := b.core.Pods(b.cfg.namespace)
	secs := int64(math.Ceil(grace.Seconds()))
	err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &secs})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return wrap(err, "delete pod %s", name)
	}
	// The kubelet's own work (killing, the final status) comes on top of
	// the grace period.
	wctx, cancel := context.WithTimeout(ctx, grace+time.Minute)
	defer cancel()
	err = b.watchPod(wctx, name, func(p *corev1.Pod) (bool, error) {
		if p == nil {
			return true, nil
		}
		if seen != nil {
			if t := lastExit(p); t != nil {
				seen(*t)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for pod %s to go: %w", name, err)
	}
	return nil
}

// Kill sends a signal to the container's main process: SIGKILL removes
// its pod at once (a process cannot be killed from inside its own PID
// namespace), other signals are sent inside the container.
func (b *Backend) Kill(ctx context.Context, id string, signal spec.Signal) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.pod == nil || !running(stateOf(c.pod).state) {
		return fmt.Errorf("kill %s: container is not running: %w", c.rec.Name, errdefs.ErrConflict)
	}
	sig := int(cmp.Or(signal, sigkill))
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "kill", nil)
	if sig != sigkill {
		return b.signal(ctx, c, sig)
	}
	if c.cm == nil {
		// Its pod goes at once; the workload starts another.
		if err := b.deletePod(ctx, c.obj(), 0, nil); err != nil {
			return fmt.Errorf("kill %s: %w", c.rec.Name, err)
		}
		code := 128 + sigkill
		b.event(ctx, c.ref(b.cfg.namespace), c.rec, "die", &code)
		return b.settle(ctx, c)
	}
	var final *podState
	if err := b.deletePod(ctx, c.obj(), 0, func(st podState) {
		if final == nil {
			final = &st
		}
	}); err != nil {
		return fmt.Errorf("kill %s: %w", c.rec.Name, err)
	}
	st := podState{exitCode: 128 + sigkill, finishedAt: time.Now().UTC()}
	if final != nil {
		st = *final
	}
	if err := b.saveState(ctx, c, func(ls *lastState) { fromPod(ls, st) }); err != nil {
		return err
	}
	code := st.exitCode
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "die", &code)
	return nil
}

// Remove deletes the container: its pod (a running one only with Force),
// its files Secret and its record.
func (b *Backend) Remove(ctx context.Context, id string, o backends.RemoveOptions) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.cm == nil {
		return b.removeReplica(ctx, c)
	}
	if c.pod != nil {
		if running(stateOf(c.pod).state) && c.pod.DeletionTimestamp == nil && !o.Force {
			return fmt.Errorf("remove %s: the container is running: stop it first, or force: %w", c.rec.Name, errdefs.ErrConflict)
		}
		if err := b.deletePod(ctx, c.obj(), 0, nil); err != nil {
			return fmt.Errorf("remove %s: %w", c.rec.Name, err)
		}
	}
	if err := b.core.Secrets(b.cfg.namespace).Delete(ctx, c.obj(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "remove %s (Secret %s)", c.rec.Name, c.obj())
	}
	bg := metav1.DeletePropagationBackground
	if err := b.core.ConfigMaps(b.cfg.namespace).Delete(ctx, c.obj(), metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "remove %s (ConfigMap %s)", c.rec.Name, c.obj())
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "destroy", nil)
	return b.unpublishApp(ctx, c.rec)
}

// Wait blocks until the container is not running and returns its exit
// code.
func (b *Backend) Wait(ctx context.Context, id string) (int, error) {
	c, err := b.find(ctx, id)
	if err != nil {
		return 0, err
	}
	if c.pod == nil {
		return c.rec.State.ExitCode, nil
	}
	code := 0
	gone := false
	before := c.rec.State.FinishedAt
	err = b.watchPod(ctx, c.obj(), func(p *corev1.Pod) (bool, error) {
		if p == nil || c.cm != nil && !ownedBy(p, c.cm.UID) || c.cm == nil && p.UID != c.pod.UID {
			gone = true
			return true, nil
		}
		st := stateOf(p)
		if st.state == backends.StateExited {
			code = st.exitCode
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return 0, fmt.Errorf("wait for %s: %w", c.rec.Name, err)
	}
	if gone {
		return b.recordedExit(ctx, id, before, c.cm != nil)
	}
	return code, nil
}

// recordedExit is the exit code a stop or removal recorded for a
// container whose pod went while Wait watched it. A replica with a record
// of its own (own) gets the pod's last state saved after the pod is gone,
// so that save (a finish after before) is waited for, bounded: under load
// a pod's status lags its process, and the pod can go before a watcher
// saw it exit (CI37: an exit 3 read as the record's stale 0). A
// workload's replica keeps the record's last state.
func (b *Backend) recordedExit(ctx context.Context, id string, before time.Time, own bool) (int, error) {
	last := 0
	for range 50 {
		c, err := b.find(ctx, id)
		switch {
		case errdefs.IsNotFound(err):
			return last, nil // removed
		case err == nil && c.pod == nil && c.rec.State.Started:
			last = c.rec.State.ExitCode
			if !own || c.rec.State.FinishedAt.After(before) {
				return last, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return last, nil
}

// running: the container's process is up (or about to be restarted).
func running(s backends.State) bool {
	return s == backends.StateRunning || s == backends.StateRestarting
}

// Restart stops the container (its pod ends with the stop signal and
// grace period) and starts a new pod from the same record: a pod's
// containers cannot be restarted in place through the API.
func (b *Backend) Restart(ctx context.Context, id string, o backends.StopOptions) error {
	if c, err := b.find(ctx, id); err == nil && c.cm == nil {
		return b.restartReplica(ctx, c, o)
	}
	if err := b.Stop(ctx, id, o); err != nil {
		return err
	}
	return b.Start(ctx, id)
}

// Rename gives the container a new name (its objects keep theirs).
func (b *Backend) Rename(ctx context.Context, id, name string) error {
	c, err := b.find(ctx, id)
	if err != nil {
		return err
	}
	if c.rec.Name == name {
		return nil
	}
	if c.cm == nil {
		return notForReplica(c, "rename")
	}
	if err := b.nameFree(ctx, name); err != nil {
		return err
	}
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q},"annotations":{%q:%q}}}`, labelName, labelValue(name), annName, name)
	if _, err := b.core.ConfigMaps(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return wrap(err, "rename %s to %s", c.rec.Name, name)
	}
	if c.pod != nil {
		if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "rename %s to %s (pod)", c.rec.Name, name)
		}
	}
	c.rec.Name = name
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "rename", nil)
	return nil
}
