package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/containerd/errdefs"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// An app run by cornus's own front ends is a workload (EnvWorkloads
// controllers): a Deployment, or a Job for an app others wait on to
// complete. Its pod template carries the replicas' record (annRecord), so
// each pod is a container to List, Inspect, Exec and Logs, numbered by a
// label cornus sets (labelReplica) and named NamePrefix+N. The files
// Secret is per template (its name ends in the config hash) and owned by
// the workload.
const (
	kindWorkload  = "workload"
	annRecord     = "cornus.dev/record"
	annConfigHash = "cornus.dev/config-hash"
	annForced     = "cornus.dev/restarted-at" // a forced rollout (up --force-recreate)

	kindDeployment = "Deployment"
	kindJob        = "Job"
)

// workloadName is the Deployment's or Job's name.
func workloadName(project, app string) string { return dnsLabel(project+"-"+app, 63) }

// FitsWorkload reports why w cannot run as a Deployment, "" when it can:
// Deployments restart every container, and all replicas of a template
// share its host ports.
func (b *Backend) FitsWorkload(w backends.WorkloadSpec) string {
	cs := w.Template
	switch {
	case !b.cfg.controllers:
		return EnvWorkloads + " is pods"
	case !w.Complete && (cs.Restart.Name == spec.RestartNo || cs.Restart.Name == spec.RestartOnFailure):
		return "restart " + cs.Restart.Name + ": a Deployment always restarts its containers"
	case cs.Sidecar != nil:
		return "its companion is per replica"
	}
	if w.Replicas > 1 && b.cfg.publish == PublishHostPort {
		for _, p := range cs.Ports {
			if p.HostPort == 0 || p.HostPortEnd > p.HostPort {
				return "ports: each replica needs a host port of its own"
			}
		}
	}
	return ""
}

// workload is an app's Deployment or Job, whichever it has.
type workload struct {
	kind, name string
	dep        *appsv1.Deployment
	job        *batchv1.Job
}

func (w workload) template() *corev1.PodTemplateSpec {
	if w.dep != nil {
		return &w.dep.Spec.Template
	}
	return &w.job.Spec.Template
}

func (w workload) meta() *metav1.ObjectMeta {
	if w.dep != nil {
		return &w.dep.ObjectMeta
	}
	return &w.job.ObjectMeta
}

// podSelector selects the workload's pods, of every template.
func (w workload) podSelector() string {
	l := w.meta().Labels
	return labels.Set{labelManagedBy: managedBy, labelKind: kindWorkload, labelProject: l[labelProject], labelApp: l[labelApp]}.String()
}

func (w workload) owner() metav1.OwnerReference {
	m := w.meta()
	if w.dep != nil {
		return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kindDeployment, Name: m.Name, UID: m.UID}
	}
	return metav1.OwnerReference{APIVersion: "batch/v1", Kind: kindJob, Name: m.Name, UID: m.UID}
}

// getWorkload returns the app's Deployment or Job (found false when it
// has neither).
func (b *Backend) getWorkload(ctx context.Context, name string) (workload, bool, error) {
	d, err := b.apps.Deployments(b.cfg.namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return workload{kind: kindDeployment, name: name, dep: d}, true, nil
	}
	if !apierrors.IsNotFound(err) {
		return workload{}, false, wrap(err, "get Deployment %s", name)
	}
	j, err := b.batch.Jobs(b.cfg.namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return workload{kind: kindJob, name: name, job: j}, true, nil
	}
	if !apierrors.IsNotFound(err) {
		return workload{}, false, wrap(err, "get Job %s", name)
	}
	return workload{}, false, nil
}

// ApplyWorkload creates or updates the app's Deployment (a rolling update
// when the template changed) or Job (replaced when it changed: a Job's
// template is immutable), then waits for the template's replicas to start
// and the old ones to go, numbers the new ones and publishes their names.
func (b *Backend) ApplyWorkload(ctx context.Context, w backends.WorkloadSpec) (backends.WorkloadResult, error) {
	t := targetOf(w)
	name, hash, kind := t.name, t.hash, t.kind
	begin := time.Now().Add(-time.Second) // creation times are in whole seconds
	cur, found, err := b.getWorkload(ctx, name)
	if err != nil {
		return backends.WorkloadResult{}, err
	}
	same := found && cur.kind == kind && cur.template().Annotations[annConfigHash] == hash && !w.Force
	if found && cur.kind != kind || found && kind == kindJob && !same {
		// A Deployment became a Job or back, or a Job changed: replaced.
		if err := b.removeWorkload(ctx, cur, nil); err != nil {
			return backends.WorkloadResult{}, err
		}
		found, same = false, false
	}
	oldFiles, err := b.changeWorkload(ctx, w, t, cur, found, same)
	if err != nil {
		return backends.WorkloadResult{}, err
	}
	cur, _, err = b.getWorkload(ctx, name)
	if err != nil {
		return backends.WorkloadResult{}, err
	}
	if files := filesSecretOf(cur.template().Spec); files != "" {
		if err := b.ownFiles(ctx, files, cur); err != nil {
			return backends.WorkloadResult{}, err
		}
	}
	cs2, err := b.awaitWorkload(ctx, cur, hash, w.Replicas)
	if err != nil {
		if !found {
			// Nothing half-made stays: a new workload that cannot start goes.
			_ = b.removeWorkload(context.WithoutCancel(ctx), cur, ptr(time.Duration(0)))
		}
		return backends.WorkloadResult{}, err
	}
	if oldFiles != "" && oldFiles != filesSecretOf(cur.template().Spec) {
		if err := b.core.Secrets(b.cfg.namespace).Delete(ctx, oldFiles, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return backends.WorkloadResult{}, wrap(err, "delete the earlier template's Secret %s", oldFiles)
		}
	}
	res := backends.WorkloadResult{Changed: !same}
	for _, c := range cs2 {
		if !c.rec.Created.Before(begin) {
			b.event(ctx, c.ref(b.cfg.namespace), c.rec, "create", nil)
			b.event(ctx, c.ref(b.cfg.namespace), c.rec, "start", nil)
		}
		res.Replicas = append(res.Replicas, b.view(c.rec, c.pod, healthInfo{}).Container)
	}
	return res, nil
}

// workloadTarget is what a workload spec applies to: the workload's name
// and kind, and the template's config hash.
type workloadTarget struct{ name, hash, kind string }

func targetOf(w backends.WorkloadSpec) workloadTarget {
	t := workloadTarget{name: workloadName(w.Template.Project, w.Template.App), hash: w.Template.Labels[backends.LabelConfigHash], kind: kindDeployment}
	if w.Complete {
		t.kind = kindJob
	}
	return t
}

// changeWorkload brings a workload to w: nothing when it is the same, a
// scale when only the replica count or update settings changed, else a new
// template. It returns the files Secret of the template replaced, for the
// caller to delete once the new one runs.
func (b *Backend) changeWorkload(ctx context.Context, w backends.WorkloadSpec, t workloadTarget, cur workload, found, same bool) (oldFiles string, err error) {
	switch {
	case same && (t.kind == kindJob || int(ptrOr(cur.dep.Spec.Replicas, 1)) == w.Replicas && len(stoppedOf(cur.dep)) == 0 &&
		equality.Semantic.DeepEqual(cur.dep.Spec.Strategy, strategy(w.Update))):
		// Unchanged: wait for what may still be starting.
	case same:
		// Scaled, or replicas were stopped: the spec's number runs; on a
		// scale down the highest numbers go, as docker compose's do.
		if err := b.markSurplus(ctx, cur, w.Replicas); err != nil {
			return "", err
		}
		err = b.updateDeployment(ctx, t.name, func(d *appsv1.Deployment) {
			d.Spec.Replicas, d.Spec.Strategy = ptr(int32(w.Replicas)), strategy(w.Update)
			setStopped(d, nil)
		})
	default:
		var tmpl corev1.PodTemplateSpec
		if tmpl, err = b.podTemplate(ctx, w, t.name, t.hash); err != nil {
			return "", fmt.Errorf("create %s: %w", w.Template.App, err)
		}
		if found {
			oldFiles = filesSecretOf(cur.template().Spec)
		}
		if err = b.putWorkload(ctx, w, t.name, t.kind, tmpl, found); err != nil {
			if files := filesSecretOf(tmpl.Spec); files != "" && files != oldFiles {
				_ = b.core.Secrets(b.cfg.namespace).Delete(context.WithoutCancel(ctx), files, metav1.DeleteOptions{})
			}
		}
	}
	return oldFiles, err
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// podTemplate renders the replicas' pod: the pod a container of the spec
// would run, its record in an annotation, its files in a Secret of this
// template (created here).
func (b *Backend) podTemplate(ctx context.Context, w backends.WorkloadSpec, name, hash string) (corev1.PodTemplateSpec, error) {
	cs := w.Template
	in := renderInput{cs: cs, name: dnsLabel(name+"-"+hash[:min(len(hash), 10)], 253), cfg: b.cfg}
	if err := b.ensurePullSecret(ctx, cs.PullAuth); err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	var err error
	if in.uid, in.gid, in.groups, err = b.resolveUser(ctx, cs); err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	if in.hostPorts, err = b.pickHostPorts(ctx, cs.Ports); err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	if in.volumes, err = b.volumeSources(ctx, cs); err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	r, err := render(in)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	rec := r.rec
	rec.Workload, rec.NamePrefix = kindDeployment+"/"+name, w.NamePrefix
	pod := r.pod
	switch {
	case !w.Complete:
		pod.RestartPolicy = corev1.RestartPolicyAlways
	case cs.Restart.Name == spec.RestartOnFailure:
		rec.Workload = kindJob + "/" + name
		pod.RestartPolicy = corev1.RestartPolicyOnFailure
	default:
		rec.Workload = kindJob + "/" + name
		pod.RestartPolicy = corev1.RestartPolicyNever
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("encode the record of %s: %w", cs.App, err)
	}
	lj, err := json.Marshal(rec.Labels)
	if err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("encode the labels of %s: %w", cs.App, err)
	}
	podLabels := workloadSelector(cs.Project, cs.App)
	maps.Copy(podLabels, r.labels)
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{
			annRecord: string(body), annLabels: string(lj), annConfigHash: hash,
		}},
		Spec: pod,
	}
	if w.Force {
		tmpl.Annotations[annForced] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if len(r.files) > 0 {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: in.name, Labels: workloadSelector(cs.Project, cs.App)}, Data: r.files}
		if _, err := b.core.Secrets(b.cfg.namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return corev1.PodTemplateSpec{}, wrap(err, "its secrets and configs (Secret %s)", in.name)
		}
	}
	return tmpl, nil
}

// workloadSelector selects an app's workload pods.
func workloadSelector(project, app string) map[string]string {
	return map[string]string{labelManagedBy: managedBy, labelKind: kindWorkload, labelProject: labelValue(project), labelApp: labelValue(app)}
}

// filesSecretOf is the Secret a pod template mounts its files from.
func filesSecretOf(pod corev1.PodSpec) string {
	for _, v := range pod.Volumes {
		if v.Name == filesVolume && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

// ownFiles makes the workload own its files Secret, so it goes with it.
func (b *Backend) ownFiles(ctx context.Context, secret string, w workload) error {
	ref, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{w.owner()}}})
	if err != nil {
		return err
	}
	_, err = b.core.Secrets(b.cfg.namespace).Patch(ctx, secret, "application/merge-patch+json", ref, metav1.PatchOptions{})
	return wrap(err, "hand Secret %s to %s %s", secret, w.kind, w.name)
}

// putWorkload creates the workload, or updates the Deployment's template
// and replicas (its rolling update replaces the pods).
func (b *Backend) putWorkload(ctx context.Context, w backends.WorkloadSpec, name, kind string, tmpl corev1.PodTemplateSpec, exists bool) error {
	cs := w.Template
	meta := metav1.ObjectMeta{Name: name, Labels: workloadSelector(cs.Project, cs.App)}
	sel := &metav1.LabelSelector{MatchLabels: workloadSelector(cs.Project, cs.App)}
	if kind == kindJob {
		backoff := int32(0)
		if cs.Restart.Name == spec.RestartOnFailure {
			backoff = int32(max(cs.Restart.MaxRetries, 6))
		}
		job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
			Template: tmpl, BackoffLimit: &backoff,
			Parallelism: ptr(int32(w.Replicas)), Completions: ptr(int32(w.Replicas)),
		}}
		_, err := b.batch.Jobs(b.cfg.namespace).Create(ctx, job, metav1.CreateOptions{})
		return wrap(err, "create Job %s", name)
	}
	if exists {
		return b.updateDeployment(ctx, name, func(d *appsv1.Deployment) {
			d.Spec.Replicas, d.Spec.Template, d.Spec.Strategy = ptr(int32(w.Replicas)), tmpl, strategy(w.Update)
			setStopped(d, nil)
		})
	}
	dep := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(w.Replicas)), Selector: sel, Template: tmpl, Strategy: strategy(w.Update),
	}}
	_, err := b.apps.Deployments(b.cfg.namespace).Create(ctx, dep, metav1.CreateOptions{})
	return wrap(err, "create Deployment %s", name)
}

// updateDeployment applies change to the current Deployment, again when
// another writer got there first.
func (b *Backend) updateDeployment(ctx context.Context, name string, change func(*appsv1.Deployment)) error {
	deps := b.apps.Deployments(b.cfg.namespace)
	for try := 0; ; try++ {
		d, err := deps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return wrap(err, "get Deployment %s", name)
		}
		change(d)
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || try >= 5 {
			return wrap(err, "update Deployment %s", name)
		}
	}
}

// RemoveWorkload deletes the app's Deployment or Job and waits for its
// pods to go, each with its grace period (or timeout).
// With app "", every workload of the project goes.
func (b *Backend) RemoveWorkload(ctx context.Context, project, app string, timeout *time.Duration) error {
	if app == "" {
		return b.removeWorkloads(ctx, project, timeout)
	}
	w, found, err := b.getWorkload(ctx, workloadName(project, app))
	if err != nil || !found {
		return err
	}
	if err := b.removeWorkload(ctx, w, timeout); err != nil {
		return err
	}
	return b.deleteAppService(ctx, project, app)
}

// removeWorkloads removes every Deployment and Job of the project.
func (b *Backend) removeWorkloads(ctx context.Context, project string, timeout *time.Duration) error {
	sel := metav1.ListOptions{LabelSelector: labels.Set{labelManagedBy: managedBy, labelKind: kindWorkload, labelProject: labelValue(project)}.String()}
	deps, err := b.apps.Deployments(b.cfg.namespace).List(ctx, sel)
	if err != nil {
		return wrap(err, "list the Deployments of %s", project)
	}
	jobs, err := b.batch.Jobs(b.cfg.namespace).List(ctx, sel)
	if err != nil {
		return wrap(err, "list the Jobs of %s", project)
	}
	var all []workload
	for i := range deps.Items {
		all = append(all, workload{kind: kindDeployment, name: deps.Items[i].Name, dep: &deps.Items[i]})
	}
	for i := range jobs.Items {
		all = append(all, workload{kind: kindJob, name: jobs.Items[i].Name, job: &jobs.Items[i]})
	}
	for _, w := range all {
		if err := b.removeWorkload(ctx, w, timeout); err != nil {
			return err
		}
		if rec, ok := workloadRecord(w.template()); ok {
			if err := b.deleteAppService(ctx, rec.Project, rec.App); err != nil {
				return err
			}
		}
	}
	return nil
}

// workloadRecord is the record a pod template carries.
func workloadRecord(t *corev1.PodTemplateSpec) (record, bool) {
	var r record
	err := json.Unmarshal([]byte(t.Annotations[annRecord]), &r)
	return r, err == nil
}

func (b *Backend) removeWorkload(ctx context.Context, w workload, timeout *time.Duration) error {
	bg := metav1.DeletePropagationBackground
	var err error
	if w.kind == kindDeployment {
		err = b.apps.Deployments(b.cfg.namespace).Delete(ctx, w.name, metav1.DeleteOptions{PropagationPolicy: &bg})
	} else {
		err = b.batch.Jobs(b.cfg.namespace).Delete(ctx, w.name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "delete %s %s", w.kind, w.name)
	}
	if files := filesSecretOf(w.template().Spec); files != "" {
		if err := b.core.Secrets(b.cfg.namespace).Delete(ctx, files, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "delete Secret %s", files)
		}
	}
	// The pods go with their grace period (the garbage collector deletes
	// them), or the shorter timeout; down returns when they are gone.
	sel := w.podSelector()
	pods := b.core.Pods(b.cfg.namespace)
	deadline := time.Now().Add(b.cfg.startTimeout + graceOf(w.template().Spec, timeout))
	for time.Now().Before(deadline) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return wrap(err, "list the pods of %s %s", w.kind, w.name)
		}
		if len(list.Items) == 0 {
			return nil
		}
		for _, p := range list.Items {
			if timeout != nil && p.DeletionTimestamp == nil {
				err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(timeout.Seconds()))})
				if err != nil && !apierrors.IsNotFound(err) {
					return wrap(err, "delete pod %s", p.Name)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("remove %s %s: its pods did not go: %w", w.kind, w.name, errdefs.ErrUnavailable)
}

// graceOf is a pod's grace period, or the override.
func graceOf(pod corev1.PodSpec, override *time.Duration) time.Duration {
	if override != nil {
		return *override
	}
	return time.Duration(ptrOr(pod.TerminationGracePeriodSeconds, 30)) * time.Second
}

// strategy maps update onto a rolling update: so many replicas at a time
// (default one), new ones surging first (start-first) or old ones going
// first (stop-first, the default); without update, Kubernetes' own
// defaults, spelled out so a re-apply compares equal.
func strategy(u *spec.UpdateConfig) appsv1.DeploymentStrategy {
	ru := &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromString("25%")), MaxUnavailable: ptr(intstr.FromString("25%"))}
	if u != nil {
		n := intstr.FromInt32(int32(max(u.Parallelism, 1)))
		ru.MaxSurge, ru.MaxUnavailable = ptr(intstr.FromInt32(0)), &n
		if u.Order == spec.UpdateStartFirst {
			ru.MaxSurge, ru.MaxUnavailable = &n, ptr(intstr.FromInt32(0))
		}
	}
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: ru}
}
