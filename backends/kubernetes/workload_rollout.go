package kubernetes

import (
	"context"
	"fmt"
	"time"

	"github.com/containerd/errdefs"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// awaitWorkload waits until want replicas of the template (hash) have
// started (a Job's may have finished; a Deployment's number is its own)
// and no pod of an earlier template is left, then numbers the replicas
// and publishes their names. It fails with what keeps a replica from
// starting.
func (b *Backend) awaitWorkload(ctx context.Context, w workload, hash string, want int) ([]container, error) {
	wctx, cancel := context.WithTimeout(ctx, b.cfg.startTimeout)
	defer cancel()
	sel := w.podSelector()
	dep := ""
	if w.dep != nil {
		dep = w.name
	}
	// Opened before the first look, so no change after it is missed.
	changed := b.changes(wctx, sel, dep)
	checked := time.Now()
	var last []corev1.Pod
	for {
		if w.dep != nil {
			// The Deployment's own count: others may be starting or
			// stopping replicas of it meanwhile.
			d, err := b.apps.Deployments(b.cfg.namespace).Get(wctx, w.name, metav1.GetOptions{})
			if err != nil {
				if wctx.Err() != nil {
					break
				}
				return nil, wrap(err, "get Deployment %s", w.name)
			}
			w.dep, want = d, int(ptrOr(d.Spec.Replicas, 1))
		}
		rolled := w.dep == nil || rolledOut(w.dep)
		forced := w.template().Annotations[annForced]
		list, err := b.core.Pods(b.cfg.namespace).List(wctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			if wctx.Err() != nil {
				break
			}
			return nil, wrap(err, "list the pods of %s %s", w.kind, w.name)
		}
		last = list.Items
		// Every 3 s, ask why a pod is not starting.
		check := time.Since(checked) > 3*time.Second
		if check {
			checked = time.Now()
		}
		current, ready, others, err := b.countPods(wctx, list.Items, hash, forced, check)
		if err != nil {
			return nil, err
		}
		if rolled && current == want && ready == want && others == 0 {
			return b.finishReplicas(ctx, w, list.Items)
		}
		select {
		case <-wctx.Done():
		case <-changed:
			continue
		case <-time.After(safetyNet):
			continue
		}
		break
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	why := ""
	for i := range last {
		if last[i].Annotations[annConfigHash] == hash {
			why = b.whyPending(ctx, &last[i])
			break
		}
	}
	return nil, fmt.Errorf("%s %s: its %d replicas did not start within %s%s (set %s to wait longer): %w",
		w.kind, w.name, want, b.cfg.startTimeout, why, EnvStartTimeout, errdefs.ErrUnavailable)
}

// countPods counts the pods of the template (hash, forced) there are and
// those started, and the pods of other templates still there; with check
// set it fails with what keeps a pod of the template from starting.
func (b *Backend) countPods(ctx context.Context, pods []corev1.Pod, hash, forced string, check bool) (current, ready, others int, err error) {
	for i := range pods {
		p := &pods[i]
		if p.Annotations[annConfigHash] != hash || p.Annotations[annForced] != forced || p.DeletionTimestamp != nil {
			others++
			continue
		}
		c, ok := workloadContainer(p, 0)
		if !ok {
			continue
		}
		current++
		ok, err := started(p, c.rec)
		if err != nil {
			return 0, 0, 0, err
		}
		if ok {
			ready++
		}
		if check {
			if why := b.startFailure(ctx, p); why != "" {
				return 0, 0, 0, fmt.Errorf("start %s: %s: %w", c.rec.App, why, errdefs.ErrFailedPrecondition)
			}
		}
	}
	return current, ready, others, nil
}

// finishReplicas numbers a workload's started replicas (around the numbers
// of stopped ones) and publishes their names.
func (b *Backend) finishReplicas(ctx context.Context, w workload, pods []corev1.Pod) ([]container, error) {
	var reserved map[int]bool
	if w.dep != nil {
		reserved = map[int]bool{}
		for n := range stoppedOf(w.dep) {
			reserved[n] = true
		}
	}
	cs, err := b.numberReplicas(ctx, pods, reserved)
	if err != nil {
		return nil, err
	}
	// A replica the workload made since (a pod deleted by anyone) resolves
	// by its names from now on. The replicas' writes go at once.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(replicaWrites)
	for _, c := range cs {
		g.Go(func() error { return b.publish(gctx, c) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return cs, nil
}

// replicaWrites bounds the replicas of one workload written at once (their
// numbers, their EndpointSlices).
const replicaWrites = 8

// rolledOut reports whether the Deployment's controller has seen its
// latest spec and replaced every replica of earlier templates (kubectl
// rollout status's test, without availability: a replica counts once its
// container started, as a container does). Until then a pod list may
// still show only the earlier template's pods: a forced rollout keeps the
// config hash, and the controller acts after the update returns.
func rolledOut(d *appsv1.Deployment) bool {
	want := ptrOr(d.Spec.Replicas, 1)
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.Replicas == want
}

// numberReplicas gives each pod without one the lowest free replica
// number (a label, so a replica keeps its name), and returns them all as
// containers.
func (b *Backend) numberReplicas(ctx context.Context, pods []corev1.Pod, reserved map[int]bool) ([]container, error) {
	ptrs := make([]*corev1.Pod, 0, len(pods))
	for i := range pods {
		if pods[i].DeletionTimestamp == nil {
			ptrs = append(ptrs, &pods[i])
		}
	}
	nums := numbered(ptrs, reserved)
	found := make([]*container, len(ptrs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(replicaWrites)
	for i, p := range ptrs {
		n := nums[p]
		g.Go(func() error {
			if p.Labels[labelReplica] != fmt.Sprint(n) {
				patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, labelReplica, fmt.Sprint(n))
				np, err := b.core.Pods(b.cfg.namespace).Patch(gctx, p.Name, "application/merge-patch+json", patch, metav1.PatchOptions{})
				if err != nil {
					return wrap(err, "number pod %s", p.Name)
				}
				p = np
			}
			if c, ok := workloadContainer(p, n); ok {
				found[i] = &c
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []container
	for _, c := range found {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}
