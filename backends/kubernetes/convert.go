package kubernetes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	claims, pvcs, err := renderClaims(p, o, meta, projLabels)
	if err != nil {
		return nil, nil, err
	}
	objs = append(objs, pvcs...)
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

// renderClaims gives each volume its source: a PersistentVolumeClaim
// (rendered unless external), or a direct source for driver options.
func renderClaims(p spec.Project, o RenderOptions, meta func(string, map[string]string) metav1.ObjectMeta,
	labels func() map[string]string) (map[string]volumeSource, []any, error) {
	var objs []any
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
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: meta(volObjectName(key), labels()),
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
	return claims, objs, nil
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
