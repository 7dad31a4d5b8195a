package kubernetes

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// renderedApp is one app's manifests: its workload, Services and the
// warnings of what Kubernetes cannot carry.
type renderedApp struct {
	objs     []any
	warnings []spec.Warning
}

// appRender is the state of rendering one app.
type appRender struct {
	a    spec.App
	cfg  config
	cs   backends.ContainerSpec
	meta func(string, map[string]string) metav1.ObjectMeta
	out  renderedApp
}

func (r *appRender) warn(field, msg string) {
	r.out.warnings = append(r.out.warnings, spec.Warning{Service: r.a.Name, Field: field, Message: msg})
}

func renderApp(p spec.Project, a spec.App, cfg config, claims map[string]volumeSource, files renderedFiles, job bool,
	meta func(string, map[string]string) metav1.ObjectMeta) (renderedApp, error) {
	cs, err := backends.Resolve(backends.ResolveInput{Project: p.Name, App: a, Replica: 1, Name: a.Name, Networks: p.Networks, Volumes: p.Volumes})
	if err != nil {
		return renderedApp{}, err
	}
	nets := cs.Networks
	cs.Networks = nil // peers resolve through the app Services
	r := &appRender{a: a, cfg: cfg, cs: cs, meta: meta}
	rendered, err := render(r.podInput(claims))
	if err != nil {
		return renderedApp{}, err
	}
	pod := rendered.pod
	mountFiles(&pod, a, files)
	sel := map[string]string{labelProject: labelValue(p.Name), labelApp: labelValue(a.Name)}
	podLabels := maps.Clone(sel)
	podLabels[labelManagedBy] = managedBy
	for _, n := range nets {
		podLabels[netLabelPrefix+dnsLabel(n.Key, 63)] = "1"
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod}
	name := dnsLabel(a.Name, 63)
	if job {
		r.job(name, tmpl)
	} else {
		r.deployment(name, tmpl, sel)
	}
	r.services(name, nets, podLabels, sel)
	return r.out, nil
}

// podInput is what render needs of the app, with the user, groups and
// ports Kubernetes cannot take warned about.
func (r *appRender) podInput(claims map[string]volumeSource) renderInput {
	cs := r.cs
	in := renderInput{cs: cs, name: r.a.Name, cfg: r.cfg, volumes: claims}
	user, group, _ := strings.Cut(cs.User, ":")
	if n, err := strconv.ParseInt(user, 10, 64); err == nil {
		in.uid = &n
	} else if user != "" {
		r.warn("user", fmt.Sprintf("%q: Kubernetes takes a numeric UID; the image's user runs", user))
	}
	if n, err := strconv.ParseInt(group, 10, 64); err == nil {
		in.gid = &n
	}
	for _, g := range cs.GroupAdd {
		if n, err := strconv.ParseInt(g, 10, 64); err == nil {
			in.groups = append(in.groups, n)
		} else {
			r.warn("groupAdd", fmt.Sprintf("%q: Kubernetes takes numeric group IDs; ignored", g))
		}
	}
	for _, pm := range cs.Ports {
		in.hostPorts = append(in.hostPorts, pm.HostPort)
		if pm.HostPort == 0 && r.cfg.publish == PublishHostPort {
			r.warn("ports", fmt.Sprintf("%d/%s: no host port given: the port is not published on the node", pm.ContainerPort, pm.Protocol))
		}
	}
	return in
}

// mountFiles mounts secrets and configs from their own objects instead of
// the files Secret a pod of the live backend uses.
func mountFiles(pod *corev1.PodSpec, a spec.App, files renderedFiles) {
	c := &pod.Containers[0]
	pod.Volumes = slices.DeleteFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == filesVolume })
	c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == filesVolume })
	for _, set := range []struct {
		kind string
		fms  []spec.FileMount
	}{{"secrets", a.Secrets}, {"configs", a.Configs}} {
		for _, fm := range set.fms {
			obj := files.source[set.kind+"/"+fm.Name]
			mode := int32(0o444)
			if fm.Mode != nil {
				mode = int32(*fm.Mode)
			}
			// A volume per object and mode: the mode is the volume's item's,
			// so two targets of one secret with their own modes need two.
			vol := strings.TrimSuffix(set.kind, "s") + "-" + fm.Name
			if mode != 0o444 {
				vol += fmt.Sprintf(".%o", mode) // hashed by dnsLabel: no clash with a name "x-400"
			}
			vol = dnsLabel(vol, 63)
			items := []corev1.KeyToPath{{Key: "content", Path: "content", Mode: ptr(mode)}}
			vs := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: obj}, Items: items}}
			if set.kind == "secrets" {
				vs = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: obj, Items: items}}
			}
			if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == vol }) {
				pod.Volumes = append(pod.Volumes, corev1.Volume{Name: vol, VolumeSource: vs})
			}
			target := fm.Target
			if target == "" {
				target = "/run/secrets/" + fm.Name
			}
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: target, SubPath: "content", ReadOnly: true})
		}
	}
}

// job renders an app others wait for as a Job: it restarts only on failure.
func (r *appRender) job(name string, tmpl corev1.PodTemplateSpec) {
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	backoff := int32(0)
	if r.cs.Restart.Name == spec.RestartOnFailure {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		backoff = int32(max(r.cs.Restart.MaxRetries, 6))
	}
	n := ptr(int32(r.a.ReplicaCount()))
	r.out.objs = append(r.out.objs, &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: r.meta(name, tmpl.Labels),
		Spec: batchv1.JobSpec{Template: tmpl, BackoffLimit: &backoff, Parallelism: n, Completions: ptr(*n)},
	})
}

// deployment renders any other app as a Deployment, which always restarts
// its containers.
func (r *appRender) deployment(name string, tmpl corev1.PodTemplateSpec, sel map[string]string) {
	switch r.cs.Restart.Name {
	case "", spec.RestartNo, spec.RestartOnFailure:
		if r.a.Restart != "" {
			r.warn("restart", fmt.Sprintf("%q: a Deployment always restarts its containers", r.a.Restart))
		}
	}
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	r.out.objs = append(r.out.objs, &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: r.meta(name, tmpl.Labels),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(r.a.ReplicaCount())), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl,
			Strategy: strategy(r.a.Update),
		},
	})
}

// services renders the headless Services peers resolve the app (and its
// aliases) by, every port, and the published ports' Service unless they
// are host ports.
func (r *appRender) services(name string, nets []backends.NetworkAttachment, podLabels, sel map[string]string) {
	svcNames := []string{name}
	for _, n := range nets {
		for _, al := range n.Aliases {
			if al != r.a.Name && isDNSLabel(al) && !slices.Contains(svcNames, al) {
				svcNames = append(svcNames, al)
			}
		}
	}
	for _, sn := range svcNames {
		r.out.objs = append(r.out.objs, &corev1.Service{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: r.meta(sn, maps.Clone(podLabels)),
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: sel, PublishNotReadyAddresses: true},
		})
	}
	if r.cfg.publish == PublishHostPort || len(r.cs.Ports) == 0 {
		return
	}
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: r.meta(dnsLabel(name+"-published", 63), maps.Clone(podLabels)),
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: sel}}
	if r.cfg.publish == PublishLoadBalancer {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	}
	for _, pm := range r.cs.Ports {
		proto, _ := protocol(pm.Protocol)
		sp := corev1.ServicePort{Name: fmt.Sprintf("%s-%d", strings.ToLower(string(proto)), pm.ContainerPort), Protocol: proto,
			Port: int32(max(pm.HostPort, pm.ContainerPort)), TargetPort: intstr.FromInt32(int32(pm.ContainerPort))}
		if pm.HostPort >= 30000 && pm.HostPort <= 32767 {
			sp.NodePort = int32(pm.HostPort)
		}
		svc.Spec.Ports = append(svc.Spec.Ports, sp)
	}
	r.out.objs = append(r.out.objs, svc)
}
