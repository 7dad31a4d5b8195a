package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cornus-dev/cornus/backends"
)

// A named volume is a PersistentVolumeClaim of CORNUS_K8S_STORAGE_CLASS
// (else the cluster's default class) and CORNUS_K8S_VOLUME_SIZE: the
// cluster provides the storage; cornus never creates PersistentVolumes. A
// volume whose driver options bind a host directory (or mount NFS) has no
// claim: a ConfigMap "volume-NAME" records it and pods mount the host path
// (or the export) directly.

// volumeInfo is one volume and how pods mount it.
type volumeInfo struct {
	vol    backends.Volume
	source volumeSource
}

func volumeRecordName(name string) string { return dnsLabel("volume-"+name, 253) }

// EnsureVolume returns the named volume, creating its claim if missing.
func (b *Backend) EnsureVolume(ctx context.Context, v backends.VolumeSpec) (backends.Volume, error) {
	name := v.RuntimeName()
	if got, err := b.volume(ctx, name); err == nil {
		return got.vol, nil
	} else if !errdefs.IsNotFound(err) {
		return backends.Volume{}, err
	}
	if v.Volume.External {
		return backends.Volume{}, fmt.Errorf("external volume %s not found (no PersistentVolumeClaim %s in namespace %s): create it first: %w", name, volObjectName(name), b.cfg.namespace, errdefs.ErrNotFound)
	}
	all := map[string]string{}
	for k, val := range v.Volume.Labels {
		all[k] = val
	}
	for k, val := range v.Labels {
		all[k] = val
	}
	lj, _ := json.Marshal(all)
	meta := metav1.ObjectMeta{
		Labels:      map[string]string{labelManagedBy: managedBy, labelKind: kindVolume, labelVolume: labelValue(v.Key)},
		Annotations: map[string]string{annVolume: name, annLabels: string(lj)},
	}
	if v.Project != "" {
		meta.Labels[labelProject] = labelValue(v.Project)
	}
	if len(v.Volume.DriverOpts) > 0 || (v.Volume.Driver != "" && v.Volume.Driver != "local") {
		// The options are kept as given: the host policy checks them
		// again whenever a container mounts the volume (the proxy's
		// docker run -v NAME:...). Options a pod cannot mount (a block
		// device's filesystem) are recorded like Docker's local driver
		// does, and refused when a container mounts the volume.
		data := map[string]string{}
		src, err := driverVolume(v.Volume.Driver, v.Volume.DriverOpts)
		switch {
		case err == nil:
			body, _ := json.Marshal(src)
			data["source.json"] = string(body)
		case errdefs.IsNotImplemented(err) && (v.Volume.Driver == "" || v.Volume.Driver == "local"):
			data["unmountable"] = err.Error()
		default:
			return backends.Volume{}, fmt.Errorf("volume %s: %w", name, err)
		}
		opts, _ := json.Marshal(v.Volume.DriverOpts)
		data["options.json"] = string(opts)
		meta.Name = volumeRecordName(name)
		cm := &corev1.ConfigMap{ObjectMeta: meta, Data: data}
		if _, err := b.core.ConfigMaps(b.cfg.namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return backends.Volume{}, wrap(err, "create volume %s (ConfigMap %s)", name, meta.Name)
		}
	} else {
		meta.Name = volObjectName(name)
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: meta,
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: b.cfg.volumeSize}},
			},
		}
		if b.cfg.storageClass != "" {
			pvc.Spec.StorageClassName = ptr(b.cfg.storageClass)
		}
		if _, err := b.core.PersistentVolumeClaims(b.cfg.namespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return backends.Volume{}, wrap(err, "create volume %s (PersistentVolumeClaim %s)", name, meta.Name)
		}
	}
	got, err := b.volume(ctx, name)
	return got.vol, err
}

// volume finds a named volume by its runtime name.
func (b *Backend) volume(ctx context.Context, name string) (volumeInfo, error) {
	pvc, err := b.core.PersistentVolumeClaims(b.cfg.namespace).Get(ctx, volObjectName(name), metav1.GetOptions{})
	if err == nil && pvc.DeletionTimestamp == nil {
		return volumeInfo{vol: volumeOfClaim(pvc), source: volumeSource{claim: pvc.Name}}, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return volumeInfo{}, wrap(err, "volume %s", name)
	}
	cm, err := b.core.ConfigMaps(b.cfg.namespace).Get(ctx, volumeRecordName(name), metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return volumeInfo{}, fmt.Errorf("no such volume: %s: %w", name, errdefs.ErrNotFound)
		}
		return volumeInfo{}, wrap(err, "volume %s", name)
	}
	return volumeOfRecord(cm)
}

func volumeOfClaim(pvc *corev1.PersistentVolumeClaim) backends.Volume {
	v := backends.Volume{
		Name: pvc.Annotations[annVolume], Driver: "kubernetes.io/pvc", Created: pvc.CreationTimestamp.Time,
		Labels: map[string]string{}, Options: map[string]string{"claim": pvc.Name},
	}
	if v.Name == "" {
		v.Name = pvc.Name
	}
	if pvc.Spec.StorageClassName != nil {
		v.Options["storageClass"] = *pvc.Spec.StorageClassName
	}
	if pvc.Spec.VolumeName != "" {
		v.Mountpoint = "pv://" + pvc.Spec.VolumeName
	}
	_ = json.Unmarshal([]byte(pvc.Annotations[annLabels]), &v.Labels)
	return v
}

func volumeOfRecord(cm *corev1.ConfigMap) (volumeInfo, error) {
	info := volumeInfo{vol: backends.Volume{
		Name: cm.Annotations[annVolume], Driver: "local", Created: cm.CreationTimestamp.Time, Labels: map[string]string{},
	}}
	_ = json.Unmarshal([]byte(cm.Annotations[annLabels]), &info.vol.Labels)
	_ = json.Unmarshal([]byte(cm.Data["options.json"]), &info.vol.Options)
	if why := cm.Data["unmountable"]; why != "" {
		info.source.unmountable = why
		return info, nil
	}
	var src corev1.VolumeSource
	if err := json.Unmarshal([]byte(cm.Data["source.json"]), &src); err != nil {
		return volumeInfo{}, fmt.Errorf("volume record %s: %w", cm.Name, err)
	}
	info.source.direct = &src
	switch {
	case src.HostPath != nil:
		info.vol.Mountpoint = src.HostPath.Path
	case src.NFS != nil:
		info.vol.Mountpoint = src.NFS.Server + ":" + src.NFS.Path
	}
	return info, nil
}

// ListVolumes returns the named volumes whose labels match.
func (b *Backend) ListVolumes(ctx context.Context, o backends.ListOptions) ([]backends.Volume, error) {
	sel := labels.Set{labelManagedBy: managedBy, labelKind: kindVolume}
	for _, k := range []string{backends.ComposeProject, backends.LabelProject} {
		if v := o.Labels[k]; v != "" {
			sel[labelProject] = labelValue(v)
		}
	}
	lo := metav1.ListOptions{LabelSelector: sel.String()}
	pvcs, err := b.core.PersistentVolumeClaims(b.cfg.namespace).List(ctx, lo)
	if err != nil {
		return nil, wrap(err, "list volumes")
	}
	var out []backends.Volume
	for i := range pvcs.Items {
		if pvcs.Items[i].DeletionTimestamp != nil {
			continue // going away
		}
		if v := volumeOfClaim(&pvcs.Items[i]); backends.MatchLabels(v.Labels, o.Labels) {
			out = append(out, v)
		}
	}
	cms, err := b.core.ConfigMaps(b.cfg.namespace).List(ctx, lo)
	if err != nil {
		return nil, wrap(err, "list volumes")
	}
	for i := range cms.Items {
		if info, err := volumeOfRecord(&cms.Items[i]); err == nil && backends.MatchLabels(info.vol.Labels, o.Labels) {
			out = append(out, info.vol)
		}
	}
	return out, nil
}

// RemoveVolume deletes a named volume's claim (the cluster reclaims its
// storage by the class's policy) or record. A claim a pod still mounts is
// in use, unless force.
func (b *Backend) RemoveVolume(ctx context.Context, name string, force bool) error {
	info, err := b.volume(ctx, name)
	if err != nil {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	if claim := info.source.claim; claim != "" {
		if !force {
			if users, err := b.claimUsers(ctx, claim); err != nil {
				return err
			} else if len(users) > 0 {
				return fmt.Errorf("remove volume %s: in use by pod %s: %w", name, strings.Join(users, ", "), errdefs.ErrConflict)
			}
		}
		err := b.core.PersistentVolumeClaims(b.cfg.namespace).Delete(ctx, claim, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "remove volume %s (PersistentVolumeClaim %s)", name, claim)
		}
		return nil
	}
	err = b.core.ConfigMaps(b.cfg.namespace).Delete(ctx, volumeRecordName(name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return wrap(err, "remove volume %s", name)
	}
	return nil
}

// claimUsers lists the pods (not finished) that mount a claim.
func (b *Backend) claimUsers(ctx context.Context, claim string) ([]string, error) {
	pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, wrap(err, "list pods using volume claim %s", claim)
	}
	var out []string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				out = append(out, p.Name)
			}
		}
	}
	return out, nil
}

// unboundClaim explains a claim that is not bound: the provisioner's or
// binder's last word, and what to do.
func (b *Backend) unboundClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) string {
	why := ""
	sel := fields.Set{"involvedObject.uid": string(pvc.UID)}.AsSelector().String()
	if evs, err := b.core.Events(b.cfg.namespace).List(ctx, metav1.ListOptions{FieldSelector: sel}); err == nil && len(evs.Items) > 0 {
		why = " (" + evs.Items[len(evs.Items)-1].Message + ")"
	}
	class := "the cluster's default StorageClass"
	if pvc.Spec.StorageClassName != nil {
		class = "StorageClass " + *pvc.Spec.StorageClassName
	}
	return fmt.Sprintf("volume claim %s is not bound%s: cornus never creates PersistentVolumes; %s must provision one (set %s to a class with a provisioner), or the cluster operator must provide a matching PersistentVolume",
		pvc.Name, why, class, EnvStorageClass)
}
