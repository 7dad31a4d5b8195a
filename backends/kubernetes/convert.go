package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/errdefs"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// RenderOptions shape Render's manifests.
type RenderOptions struct {
	// Namespace, if set, goes into every object (else kubectl -n decides).
	Namespace string
	// Publish is the publish mode (hostport, nodeport, loadbalancer).
	Publish string
	// StorageClass, if set, is every claim's class; VolumeSize their size
	// (default 1Gi).
	StorageClass string
	VolumeSize   string
	// Content returns a secret's or config's content (kind "secrets" or
	// "configs"); Render does no I/O itself.
	Content func(kind string, fm spec.FileMount) ([]byte, error)
}

// Render turns a project into Kubernetes manifests (multi-document YAML)
// a user applies with kubectl into a namespace of its own: `cornus compose
// convert --format k8s`. It is the cluster-native form of what the backend
// runs pod by pod: each app a Deployment (replicas, rolling update), or a
// Job when another app waits for it to complete; a headless Service per
// app and per network alias, so peers resolve one another by name on every
// port; NetworkPolicies per network; a PersistentVolumeClaim per named
// volume; a Secret per secret and a ConfigMap per config, mounted at their
// targets. The pod templates are the backend's own pods. It does no I/O;
// the warnings name what has no Kubernetes form.
func Render(p spec.Project, o RenderOptions) ([]byte, []spec.Warning, error) {
	cfg := config{namespace: or(o.Namespace, DefaultNamespace), publish: or(o.Publish, PublishHostPort), clusterDomain: DefaultClusterDomain,
		storageClass: o.StorageClass, controllers: true}
	var warns []spec.Warning
	var objs []any
	meta := func(name string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels}
	}
	projLabels := func() map[string]string {
		return map[string]string{labelManagedBy: managedBy, labelProject: labelValue(p.Name)}
	}
	completers := map[string]bool{}
	for _, a := range p.Services {
		for dep, d := range a.DependsOn {
			if d.Condition == spec.ConditionCompleted {
				completers[dep] = true
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(p.Networks)) {
		member := metav1.LabelSelector{MatchLabels: map[string]string{netLabelPrefix + dnsLabel(key, 63): "1"}}
		objs = append(objs, &networkingv1.NetworkPolicy{
			TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}, ObjectMeta: meta(dnsLabel("net-"+key, 63), projLabels()),
			Spec: networkingv1.NetworkPolicySpec{PodSelector: member, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &member}}}}},
		})
	}
	size := or(o.VolumeSize, defaultVolumeSize)
	claims := map[string]volumeSource{}
	for _, key := range slices.Sorted(maps.Keys(p.Volumes)) {
		v := p.Volumes[key]
		if len(v.DriverOpts) > 0 {
			src, err := driverVolume(v.Driver, v.DriverOpts)
			if err != nil {
				return nil, nil, fmt.Errorf("volumes.%s: %w", key, err)
			}
			claims[v.Name] = volumeSource{direct: &src}
			continue
		}
		claims[v.Name] = volumeSource{claim: volObjectName(key)}
		if v.External {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: meta(volObjectName(key), projLabels()),
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
		}
		q, err := parseQuantity(size)
		if err != nil {
			return nil, nil, err
		}
		pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
		if o.StorageClass != "" {
			pvc.Spec.StorageClassName = ptr(o.StorageClass)
		}
		objs = append(objs, pvc)
	}
	files, err := renderFiles(p, o, meta, projLabels)
	if err != nil {
		return nil, nil, err
	}
	objs = append(objs, files.objs...)
	for _, name := range p.ServiceNames() {
		a := p.Services[name]
		warns = append(warns, backends.Unhonored(Name, capabilities(cfg), a)...)
		w, err := renderApp(p, a, cfg, claims, files, completers[name], meta)
		if err != nil {
			return nil, nil, fmt.Errorf("services.%s: %w", name, err)
		}
		warns = append(warns, w.warnings...)
		objs = append(objs, w.objs...)
	}
	var out bytes.Buffer
	for _, obj := range objs {
		y, err := cleanYAML(obj)
		if err != nil {
			return nil, nil, err
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	return out.Bytes(), warns, nil
}

// renderedFiles are the project's secrets and configs as objects, and
// where each (kind, name) lives.
type renderedFiles struct {
	objs []any
	// source maps "secrets/NAME" or "configs/NAME" to the object's name.
	source map[string]string
}

func renderFiles(p spec.Project, o RenderOptions, meta func(string, map[string]string) metav1.ObjectMeta, labels func() map[string]string) (renderedFiles, error) {
	out := renderedFiles{source: map[string]string{}}
	for _, name := range p.ServiceNames() {
		a := p.Services[name]
		for _, set := range []struct {
			kind string
			fms  []spec.FileMount
		}{{"secrets", a.Secrets}, {"configs", a.Configs}} {
			for i, fm := range set.fms {
				key := set.kind + "/" + fm.Name
				if _, done := out.source[key]; done {
					continue
				}
				if o.Content == nil {
					return out, fmt.Errorf("services.%s.%s[%d]: no content resolver: %w", name, set.kind, i, errInvalid)
				}
				body, err := o.Content(set.kind, fm)
				if err != nil {
					return out, fmt.Errorf("services.%s.%s[%d] (%s): %w", name, set.kind, i, fm.Name, err)
				}
				obj := dnsLabel(strings.TrimSuffix(set.kind, "s")+"-"+fm.Name, 253)
				out.source[key] = obj
				if set.kind == "secrets" {
					out.objs = append(out.objs, &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
						ObjectMeta: meta(obj, labels()), Data: map[string][]byte{"content": body}})
				} else {
					out.objs = append(out.objs, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
						ObjectMeta: meta(obj, labels()), BinaryData: map[string][]byte{"content": body}})
				}
			}
		}
	}
	return out, nil
}

type renderedApp struct {
	objs     []any
	warnings []spec.Warning
}

func renderApp(p spec.Project, a spec.App, cfg config, claims map[string]volumeSource, files renderedFiles, job bool,
	meta func(string, map[string]string) metav1.ObjectMeta) (renderedApp, error) {
	var out renderedApp
	warn := func(field, msg string) {
		out.warnings = append(out.warnings, spec.Warning{Service: a.Name, Field: field, Message: msg})
	}
	cs, err := backends.Resolve(backends.ResolveInput{Project: p.Name, App: a, Replica: 1, Name: a.Name, Networks: p.Networks, Volumes: p.Volumes})
	if err != nil {
		return out, err
	}
	nets := cs.Networks
	cs.Networks = nil // peers resolve through the app Services
	in := renderInput{cs: cs, name: a.Name, cfg: cfg, volumes: claims}
	user, group, _ := strings.Cut(cs.User, ":")
	if n, err := strconv.ParseInt(user, 10, 64); err == nil {
		in.uid = &n
	} else if user != "" {
		warn("user", fmt.Sprintf("%q: Kubernetes takes a numeric UID; the image's user runs", user))
	}
	if n, err := strconv.ParseInt(group, 10, 64); err == nil {
		in.gid = &n
	}
	for _, g := range cs.GroupAdd {
		if n, err := strconv.ParseInt(g, 10, 64); err == nil {
			in.groups = append(in.groups, n)
		} else {
			warn("groupAdd", fmt.Sprintf("%q: Kubernetes takes numeric group IDs; ignored", g))
		}
	}
	for _, pm := range cs.Ports {
		in.hostPorts = append(in.hostPorts, pm.HostPort)
		if pm.HostPort == 0 && cfg.publish == PublishHostPort {
			warn("ports", fmt.Sprintf("%d/%s: no host port given: the port is not published on the node", pm.ContainerPort, pm.Protocol))
		}
	}
	r, err := render(in)
	if err != nil {
		return out, err
	}
	pod := r.pod
	c := &pod.Containers[0]
	// Secrets and configs: their own objects instead of the files Secret.
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
	sel := map[string]string{labelProject: labelValue(p.Name), labelApp: labelValue(a.Name)}
	podLabels := maps.Clone(sel)
	podLabels[labelManagedBy] = managedBy
	for _, n := range nets {
		podLabels[netLabelPrefix+dnsLabel(n.Key, 63)] = "1"
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod}
	name := dnsLabel(a.Name, 63)
	if job {
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		backoff := int32(0)
		if cs.Restart.Name == spec.RestartOnFailure {
			tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			backoff = int32(max(cs.Restart.MaxRetries, 6))
		}
		out.objs = append(out.objs, &batchv1.Job{
			TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(name, podLabels),
			Spec: batchv1.JobSpec{Template: tmpl, BackoffLimit: &backoff, Parallelism: ptr(int32(a.ReplicaCount())), Completions: ptr(int32(a.ReplicaCount()))},
		})
	} else {
		if cs.Restart.Name == "" || cs.Restart.Name == spec.RestartNo || cs.Restart.Name == spec.RestartOnFailure {
			if a.Restart != "" {
				warn("restart", fmt.Sprintf("%q: a Deployment always restarts its containers", a.Restart))
			}
		}
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
		out.objs = append(out.objs, &appsv1.Deployment{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta(name, podLabels),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(a.ReplicaCount())), Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tmpl,
				Strategy: strategy(a.Update),
			},
		})
	}
	// Peers resolve the app (and its aliases) to its pods, every port.
	svcNames := []string{name}
	for _, n := range nets {
		for _, al := range n.Aliases {
			if al != a.Name && isDNSLabel(al) && !slices.Contains(svcNames, al) {
				svcNames = append(svcNames, al)
			}
		}
	}
	for _, sn := range svcNames {
		out.objs = append(out.objs, &corev1.Service{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(sn, maps.Clone(podLabels)),
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: sel, PublishNotReadyAddresses: true},
		})
	}
	if cfg.publish != PublishHostPort && len(cs.Ports) > 0 {
		svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(dnsLabel(name+"-published", 63), maps.Clone(podLabels)),
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: sel}}
		if cfg.publish == PublishLoadBalancer {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		}
		for _, pm := range cs.Ports {
			proto, _ := protocol(pm.Protocol)
			sp := corev1.ServicePort{Name: fmt.Sprintf("%s-%d", strings.ToLower(string(proto)), pm.ContainerPort), Protocol: proto,
				Port: int32(max(pm.HostPort, pm.ContainerPort)), TargetPort: intstr.FromInt32(int32(pm.ContainerPort))}
			if pm.HostPort >= 30000 && pm.HostPort <= 32767 {
				sp.NodePort = int32(pm.HostPort)
			}
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
		}
		out.objs = append(out.objs, svc)
	}
	return out, nil
}

// cleanYAML marshals an object without its empty status and null
// creation time.
func cleanYAML(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	prune(m)
	return yaml.Marshal(m)
}

// prune drops null values (creationTimestamp: null) at every level.
func prune(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, x := range t {
			if prune(x) {
				delete(t, k)
			}
		}
	case []any:
		for _, x := range t {
			prune(x)
		}
	}
	return false
}

// errInvalid classes Render's own errors.
var errInvalid = errdefs.ErrInvalidArgument

func parseQuantity(s string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("volume size %q: %v: %w", s, err, errdefs.ErrInvalidArgument)
	}
	return q, nil
}
