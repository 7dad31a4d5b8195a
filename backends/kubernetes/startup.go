package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/cornus-dev/cornus/backends"
)

// awaitStart waits until c's container has started (it may have exited
// since), then publishes its names and records the start.
func (b *Backend) awaitStart(ctx context.Context, c container) error {
	wctx, cancel := context.WithTimeout(ctx, b.cfg.startTimeout)
	defer cancel()
	var last *corev1.Pod
	// What keeps a pod from starting before it has a container (its
	// sandbox, its volumes) shows only in events: look at them while it
	// is slow.
	stuck := time.AfterFunc(3*time.Second, func() {
		for wctx.Err() == nil {
			if p := c.pod; p != nil {
				if why := b.startFailure(wctx, p); why != "" {
					b.failStart(c.obj(), why)
					cancel()
					return
				}
			}
			select {
			case <-wctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	})
	defer stuck.Stop()
	err := b.watchPod(wctx, c.obj(), func(p *corev1.Pod) (bool, error) {
		if p == nil {
			return false, fmt.Errorf("start %s: its pod %s was deleted: %w", c.rec.Name, c.obj(), errdefs.ErrAborted)
		}
		last = p
		return started(p, c.rec)
	})
	if why := b.startFailed(c.obj()); why != "" {
		return fmt.Errorf("start %s: %s: %w", c.rec.Name, why, errdefs.ErrFailedPrecondition)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("start %s: its pod %s did not start within %s%s (set %s to wait longer): %w",
			c.rec.Name, c.obj(), b.cfg.startTimeout, b.whyPending(ctx, last), EnvStartTimeout, errdefs.ErrUnavailable)
	}
	if err != nil {
		return err
	}
	c.pod = last
	if err := b.publish(ctx, c); err != nil {
		return err
	}
	st := stateOf(last)
	if err := b.saveState(ctx, c, func(ls *lastState) {
		ls.Started, ls.StartedAt, ls.Error = true, st.startedAt, ""
	}); err != nil {
		return err
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "start", nil)
	return nil
}

// startFailure reads a pod's warning events for a failure the kubelet
// keeps retrying in vain (a sandbox or mount it cannot make).
func (b *Backend) startFailure(ctx context.Context, p *corev1.Pod) string {
	sel := fields.Set{"involvedObject.uid": string(p.UID), "type": corev1.EventTypeWarning}.AsSelector().String()
	evs, err := b.core.Events(b.cfg.namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return ""
	}
	for _, e := range evs.Items {
		switch e.Reason {
		case "FailedCreatePodSandBox", "FailedMount", "FailedAttachVolume", "Failed", "FailedPostStartHook", "UnexpectedAdmissionError", "SysctlForbidden":
			if e.Count >= 2 || e.Reason != "FailedMount" {
				return e.Reason + ": " + e.Message
			}
		}
	}
	return ""
}

// failStart and startFailed pass a start failure seen in events from the
// watcher to the waiting Start.
func (b *Backend) failStart(pod, why string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed == nil {
		b.failed = map[string]string{}
	}
	b.failed[pod] = why
}

func (b *Backend) startFailed(pod string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	why := b.failed[pod]
	delete(b.failed, pod)
	return why
}

// started reports whether the pod's container has started, failing when
// it cannot.
func started(p *corev1.Pod, rec record) (bool, error) {
	st := stateOf(p)
	if why := sidecarFailure(p); why != "" && st.state == backends.StateCreated {
		return false, fmt.Errorf("start %s: %s: %w", rec.Name, why, errdefs.ErrFailedPrecondition)
	}
	switch {
	case st.state == backends.StateRunning || st.state == backends.StateRestarting:
		return p.Status.PodIP != "" || p.Spec.HostNetwork, nil
	case st.state == backends.StateExited && st.err == "":
		return true, nil // ran and finished already
	case st.state == backends.StateExited:
		return false, fmt.Errorf("start %s: %s: %w", rec.Name, st.err, errdefs.ErrFailedPrecondition)
	case isStartFailure(st.waitingReason):
		msg := st.waitingMessage
		if strings.Contains(st.waitingReason, "Image") {
			msg = fmt.Sprintf("image %s: %s (the cluster pulls images itself: push it to a registry the nodes can reach, or import it into each node's runtime)", rec.Image, msg)
		}
		return false, fmt.Errorf("start %s: %s: %s: %w", rec.Name, st.waitingReason, msg, errdefs.ErrFailedPrecondition)
	}
	return false, nil
}

// whyPending explains a pod that is not starting: the scheduler's reason,
// and for an unbound volume claim what storage the cluster lacks.
func (b *Backend) whyPending(ctx context.Context, p *corev1.Pod) string {
	if p == nil {
		return ""
	}
	var why []string
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Message != "" {
			why = append(why, cond.Message)
		}
	}
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := b.core.PersistentVolumeClaims(b.cfg.namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err == nil && pvc.Status.Phase != corev1.ClaimBound {
			why = append(why, b.unboundClaim(ctx, pvc))
		}
	}
	if st := stateOf(p); st.waitingReason != "" {
		why = append(why, st.waitingReason+" "+st.waitingMessage)
	}
	if len(why) == 0 {
		return ""
	}
	return ": " + strings.Join(why, "; ")
}
