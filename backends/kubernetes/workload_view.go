package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
)

// workloadContainer reads a workload's pod as replica n (0: its label's
// number) from the record its template carries; ok is false for a pod
// without one.
func workloadContainer(p *corev1.Pod, n int) (container, bool) {
	var r record
	if err := json.Unmarshal([]byte(p.Annotations[annRecord]), &r); err != nil {
		return container{}, false
	}
	if n == 0 {
		n, _ = strconv.Atoi(p.Labels[labelReplica])
	}
	r = r.asReplica(controllerUID(p), n)
	r.Created, r.Pod = p.CreationTimestamp.Time, p.Spec
	r.State = lastState{Started: true}
	return container{rec: r, pod: p}, true
}

// asReplica is the template's record as replica n of the controller
// owner: its ID, number, name and labels (a copy of the template's).
func (r record) asReplica(owner types.UID, n int) record {
	r.ID, r.Replica = replicaID(owner, n), n
	if r.NamePrefix != "" {
		r.Name = r.NamePrefix + strconv.Itoa(n)
	}
	r.Labels = maps.Clone(r.Labels)
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	r.Labels[backends.LabelReplica] = strconv.Itoa(n)
	r.Labels[backends.ComposeNumber] = strconv.Itoa(n)
	r.Labels[backends.LabelWorkload] = r.Workload
	return r
}

// replicaID is a workload replica's container ID: 64 hex digits, like
// Docker's, from its pod's controller (the ReplicaSet of its template, or
// its Job) and its number. Like a container's, it stays the same while the
// replica is stopped, started and restarted, and is new when the template
// changes (a new ReplicaSet).
func replicaID(owner types.UID, n int) string {
	s := sha256.Sum256([]byte(string(owner) + "/" + strconv.Itoa(n)))
	return hex.EncodeToString(s[:])
}

// controllerUID is the UID of the pod's controller (the pod's own without
// one).
func controllerUID(p *corev1.Pod) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return p.UID
}

// numbered gives each pod its replica number: its label's, unless taken
// by an older pod, else the lowest free number (oldest pod first) that is
// not reserved (a stopped replica's).
func numbered(pods []*corev1.Pod, reserved map[int]bool) map[*corev1.Pod]int {
	sort.SliceStable(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp, pods[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return pods[i].Name < pods[j].Name
	})
	out := map[*corev1.Pod]int{}
	used := maps.Clone(reserved)
	if used == nil {
		used = map[int]bool{}
	}
	var rest []*corev1.Pod
	for _, p := range pods {
		n, err := strconv.Atoi(p.Labels[labelReplica])
		if err != nil || n < 1 || used[n] {
			rest = append(rest, p)
			continue
		}
		out[p], used[n] = n, true
	}
	next := 1
	for _, p := range rest {
		for used[next] {
			next++
		}
		out[p], used[next] = next, true
	}
	return out
}

// workloadContainers are the replicas among pods (any pods of the
// namespace), numbered per app around the stopped ones' numbers
// (reservedNumbers).
func workloadContainers(pods []corev1.Pod, reserved map[string]map[int]bool) []container {
	byApp := map[string][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if p.Labels[labelKind] == kindWorkload && p.Annotations[annRecord] != "" {
			key := p.Labels[labelProject] + "/" + p.Labels[labelApp]
			byApp[key] = append(byApp[key], p)
		}
	}
	var out []container
	for key, ps := range byApp {
		for p, n := range numbered(ps, reserved[key]) {
			if c, ok := workloadContainer(p, n); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// findWorkload looks a replica of a workload up by ID, unique ID prefix
// or name (find's rules).
func (b *Backend) findWorkload(ctx context.Context, ref string) ([]container, error) {
	sel := labels.Set{labelManagedBy: managedBy, labelKind: kindWorkload}
	pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, wrap(err, "find container %s", ref)
	}
	var deps []appsv1.Deployment
	if b.cfg.controllers {
		if deps, err = b.listDeployments(ctx, nil); err != nil {
			return nil, err
		}
	}
	cands := workloadContainers(pods.Items, reservedNumbers(deps))
	for i := range deps {
		cands = append(cands, stoppedContainers(&deps[i])...)
	}
	name := strings.TrimPrefix(ref, "/")
	var byID, byName, byPrefix []container
	for _, c := range cands {
		switch {
		case c.rec.ID == ref:
			byID = append(byID, c)
		case c.rec.Name == name:
			byName = append(byName, c)
		case hexID.MatchString(ref) && strings.HasPrefix(c.rec.ID, ref):
			byPrefix = append(byPrefix, c)
		}
	}
	switch {
	case len(byID) > 0:
		return byID, nil
	case len(byName) > 0:
		return byName, nil
	}
	return byPrefix, nil
}

// notForReplica is the error for what a workload's replica cannot do on
// its own: its Deployment or Job keeps it as its template says.
func notForReplica(c container, verb string) error {
	return fmt.Errorf("%s %s: it is a replica of %s, which keeps it as its template says: change the service and run up (--scale for its number of replicas), or take it down: %w",
		verb, c.rec.Name, c.rec.Workload, errdefs.ErrNotImplemented)
}

// startReplica: a Deployment's replica runs already (or is being
// restarted by the kubelet); a Job's finished replica runs again only
// with the Job (up --force-recreate).
func (b *Backend) startReplica(c container) error {
	if st := stateOf(c.pod); st.state == backends.StateExited {
		return fmt.Errorf("start %s: it ran to completion as a replica of %s: run it again with up --force-recreate: %w", c.rec.Name, c.rec.Workload, errdefs.ErrFailedPrecondition)
	}
	return nil
}

// removeReplica removes a Job's finished replica with its Job (a Job's
// pods go together); a running replica is its workload's to keep.
func (b *Backend) removeReplica(ctx context.Context, c container) error {
	if c.stoppedOf != nil {
		return b.dropStopped(ctx, c)
	}
	kind, name, _ := strings.Cut(c.rec.Workload, "/")
	if kind != kindJob || running(stateOf(c.pod).state) {
		return notForReplica(c, "remove")
	}
	w, found, err := b.getWorkload(ctx, name)
	if err != nil || !found {
		return err
	}
	if err := b.removeWorkload(ctx, w, nil); err != nil {
		return err
	}
	b.event(ctx, c.ref(b.cfg.namespace), c.rec, "destroy", nil)
	return nil
}

// restartReplica ends the replica's pod with its stop grace (or the
// timeout) and waits for the workload to have all its replicas running
// again: the replacement is a new pod, the same container (its number,
// so its name and ID, are kept).
func (b *Backend) restartReplica(ctx context.Context, c container, o backends.StopOptions) error {
	if c.stoppedOf != nil {
		return b.startStopped(ctx, c)
	}
	grace := graceOf(c.pod.Spec, o.Timeout)
	if err := b.deletePod(ctx, c.obj(), grace, nil); err != nil {
		return fmt.Errorf("restart %s: %w", c.rec.Name, err)
	}
	return b.settle(ctx, c)
}

// settle waits for the replica's workload to have all its replicas
// running again (and their names published) after one of its pods went.
func (b *Backend) settle(ctx context.Context, c container) error {
	_, name, _ := strings.Cut(c.rec.Workload, "/")
	w, found, err := b.getWorkload(ctx, name)
	if err != nil || !found || w.dep == nil {
		return err
	}
	_, err = b.awaitWorkload(ctx, w, w.template().Annotations[annConfigHash], int(ptrOr(w.dep.Spec.Replicas, 1)))
	return err
}
