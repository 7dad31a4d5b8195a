package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// A Deployment's replica is stopped the Kubernetes way: the Deployment
// keeps one replica fewer, and this pod is the one its ReplicaSet deletes
// (the lowest pod-deletion-cost goes first). The stopped replica stays a
// container, exited, from an entry of the Deployment's annotation
// annStopped (its number and last state) until it is started (one replica
// more, numbered as before), removed, or the app is applied again.
const (
	annStopped      = "cornus.dev/stopped"
	annDeletionCost = "controller.kubernetes.io/pod-deletion-cost"
)

// stoppedReplica is a stopped replica's last state and the controller
// its pod had (its container ID comes from that).
type stoppedReplica struct {
	lastState
	Owner types.UID `json:"owner,omitempty"`
}

// stoppedOf reads a Deployment's stopped replicas by number.
func stoppedOf(d *appsv1.Deployment) map[int]stoppedReplica {
	out := map[int]stoppedReplica{}
	var raw map[string]stoppedReplica
	if json.Unmarshal([]byte(d.Annotations[annStopped]), &raw) != nil {
		return out
	}
	for k, v := range raw {
		if n, err := strconv.Atoi(k); err == nil && n > 0 {
			out[n] = v
		}
	}
	return out
}

// setStopped writes the stopped replicas into d.
func setStopped(d *appsv1.Deployment, st map[int]stoppedReplica) {
	if len(st) == 0 {
		delete(d.Annotations, annStopped)
		return
	}
	raw := map[string]stoppedReplica{}
	for n, v := range st {
		raw[strconv.Itoa(n)] = v
	}
	body, _ := json.Marshal(raw)
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[annStopped] = string(body)
}

// stoppedContainers are a Deployment's stopped replicas as containers.
func stoppedContainers(d *appsv1.Deployment) []container {
	rec, ok := workloadRecord(&d.Spec.Template)
	if !ok {
		return nil
	}
	var out []container
	for n, s := range stoppedOf(d) {
		r := rec.asReplica(s.Owner, n)
		r.State, r.Created = s.lastState, s.StartedAt
		out = append(out, container{rec: r, stoppedOf: d})
	}
	return out
}

// listDeployments lists the workload Deployments sel matches (project and
// app labels).
func (b *Backend) listDeployments(ctx context.Context, sel labels.Set) ([]appsv1.Deployment, error) {
	sel = labels.Merge(sel, labels.Set{labelManagedBy: managedBy, labelKind: kindWorkload})
	deps, err := b.apps.Deployments(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, wrap(err, "list Deployments")
	}
	return deps.Items, nil
}

// reservedNumbers are the numbers of stopped replicas, per app ("project/
// app" by their labels): a new pod does not take them.
func reservedNumbers(deps []appsv1.Deployment) map[string]map[int]bool {
	out := map[string]map[int]bool{}
	for i := range deps {
		d := &deps[i]
		key := d.Labels[labelProject] + "/" + d.Labels[labelApp]
		for n := range stoppedOf(d) {
			if out[key] == nil {
				out[key] = map[int]bool{}
			}
			out[key][n] = true
		}
	}
	return out
}

// deploymentOf is the name of a replica's Deployment ("" for a Job's).
func deploymentOf(c container) string {
	kind, name, _ := strings.Cut(c.rec.Workload, "/")
	if kind != kindDeployment {
		return ""
	}
	return name
}

// releaseReplica hands a running replica's pod to its ReplicaSet to
// delete: the cheapest pod to delete, one replica fewer, an entry for it.
func (b *Backend) releaseReplica(ctx context.Context, c container) error {
	dep := deploymentOf(c)
	if dep == "" {
		return notForReplica(c, "stop")
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"-1000000"}}}`, annDeletionCost)
	if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, c.obj(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return wrap(err, "stop %s (mark pod %s to go first)", c.rec.Name, c.obj())
	}
	st := stateOf(c.pod)
	err := b.updateDeployment(ctx, dep, func(d *appsv1.Deployment) {
		stopped := stoppedOf(d)
		if _, done := stopped[c.rec.Replica]; !done {
			d.Spec.Replicas = ptr(max(ptrOr(d.Spec.Replicas, 1)-1, 0))
		}
		stopped[c.rec.Replica] = stoppedReplica{
			lastState: lastState{Started: true, StartedAt: st.startedAt, RestartCount: st.restartCount},
			Owner:     controllerUID(c.pod),
		}
		setStopped(d, stopped)
	})
	if err != nil {
		return err
	}
	// The ReplicaSet deletes the pod (deleting it first would have it
	// make a new one); Stop then goes on as for any pod, shortening the
	// grace where asked.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = b.watchPod(wctx, c.obj(), func(p *corev1.Pod) (bool, error) {
		return p == nil || p.DeletionTimestamp != nil, nil
	})
	if err != nil {
		return fmt.Errorf("stop %s: its ReplicaSet did not let pod %s go: %w", c.rec.Name, c.obj(), err)
	}
	return nil
}

// markSurplus makes the replicas numbered above want the first its
// ReplicaSet deletes.
func (b *Backend) markSurplus(ctx context.Context, w workload, want int) error {
	pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: w.podSelector()})
	if err != nil {
		return wrap(err, "list the pods of %s %s", w.kind, w.name)
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"-1000000"}}}`, annDeletionCost)
	for _, p := range pods.Items {
		if n, err := strconv.Atoi(p.Labels[labelReplica]); err == nil && n > want && p.DeletionTimestamp == nil {
			if _, err := b.core.Pods(b.cfg.namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return wrap(err, "scale %s down (mark pod %s to go first)", w.name, p.Name)
			}
		}
	}
	return nil
}

// noteStopped keeps a stopped replica's exit in its entry.
func (b *Backend) noteStopped(ctx context.Context, c container, st podState) error {
	return b.updateDeployment(ctx, deploymentOf(c), func(d *appsv1.Deployment) {
		stopped := stoppedOf(d)
		s := stopped[c.rec.Replica]
		fromPod(&s.lastState, st)
		stopped[c.rec.Replica] = s
		setStopped(d, stopped)
	})
}

// startStopped starts a stopped replica again: one replica more, its
// entry gone (its number free for the new pod), and waits for it.
func (b *Backend) startStopped(ctx context.Context, c container) error {
	name := c.stoppedOf.Name
	var want int
	err := b.updateDeployment(ctx, name, func(d *appsv1.Deployment) {
		stopped := stoppedOf(d)
		want = int(ptrOr(d.Spec.Replicas, 1))
		if _, ok := stopped[c.rec.Replica]; ok {
			delete(stopped, c.rec.Replica)
			want++
			d.Spec.Replicas = ptr(int32(want))
		}
		setStopped(d, stopped)
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", c.rec.Name, err)
	}
	w, found, err := b.getWorkload(ctx, name)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("start %s: Deployment %s is gone: %w", c.rec.Name, name, errdefs.ErrNotFound)
	}
	if _, err := b.awaitWorkload(ctx, w, w.template().Annotations[annConfigHash], want); err != nil {
		return fmt.Errorf("start %s: %w", c.rec.Name, err)
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "start", nil)
	return nil
}

// dropStopped removes a stopped replica: its entry goes.
func (b *Backend) dropStopped(ctx context.Context, c container) error {
	err := b.updateDeployment(ctx, c.stoppedOf.Name, func(d *appsv1.Deployment) {
		stopped := stoppedOf(d)
		delete(stopped, c.rec.Replica)
		setStopped(d, stopped)
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", c.rec.Name, err)
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "destroy", nil)
	return nil
}
