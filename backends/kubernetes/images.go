package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/internal/imageref"
)

// The cluster's nodes pull images themselves. cornus sees them in the
// nodes' status where the account may read nodes (cluster-wide, beyond
// cornus's namespaced Role); otherwise it asks a node: a probe pod that
// uses the image and runs nothing (its command does not exist) tells
// whether the node has the image (pull policy Never) or can pull it
// (IfNotPresent, Always). Images are not loaded through cornus.

// errLoad is `cornus image load` on this backend.
var errLoad = fmt.Errorf("the kubernetes backend cannot load images: the cluster's nodes pull images themselves. "+
	"Load it through a cornus server in front of the cluster (cornus image load --server URL: its registry serves the nodes), or push the image to a registry the nodes can reach (for example docker load -i FILE.tar, docker tag, docker push REGISTRY/NAME:TAG, "+
	"and use that reference), or import it into every node's runtime (on each node: ctr --namespace k8s.io images import FILE.tar); "+
	"pods use imagePullPolicy IfNotPresent: %w", errdefs.ErrNotImplemented)

// LoadImage explains what to do instead (errLoad).
func (b *Backend) LoadImage(ctx context.Context, tar io.Reader) ([]string, error) {
	return nil, errLoad
}

// RemoveImage is the kubelet's (image garbage collection).
func (b *Backend) RemoveImage(ctx context.Context, ref string, force bool) error {
	return fmt.Errorf("remove image %s: the kubelet removes unused images itself (image garbage collection): %w", ref, errdefs.ErrNotImplemented)
}

// normalize is the reference as the runtime names it (docker.io/library/x:latest).
func normalize(ref string) string { return imageref.Full(ref) }

// InspectImage returns an image some node holds, or NotFound.
func (b *Backend) InspectImage(ctx context.Context, ref string) (backends.Image, error) {
	want := normalize(ref)
	imgs, err := b.nodeImages(ctx)
	if err == nil {
		for _, img := range imgs {
			for _, t := range img.Tags {
				if t == want {
					return img, nil
				}
			}
		}
		return backends.Image{}, fmt.Errorf("image %s: no node has it: %w", ref, errdefs.ErrNotFound)
	}
	if !errdefs.IsPermissionDenied(err) {
		return backends.Image{}, err
	}
	return b.probe(ctx, ref, corev1.PullNever)
}

// PullsOnStart implements backends.StartPuller: pods pull with
// imagePullPolicy IfNotPresent, and a failed pull fails the start (see
// started). Without access to the nodes' image lists, asking whether an
// image is there takes a probe pod, as long as the pull itself.
func (b *Backend) PullsOnStart() {}

// PullImage has a node pull the image (a probe pod with IfNotPresent).
func (b *Backend) PullImage(ctx context.Context, ref string, progress func(backends.PullProgress)) error {
	if progress != nil {
		progress(backends.PullProgress{Status: "Pulling on a node"})
	}
	_, err := b.probe(ctx, ref, corev1.PullAlways)
	return err
}

// ListImages lists the nodes' images, or (without node access) those the
// namespace's pods use.
func (b *Backend) ListImages(ctx context.Context) ([]backends.Image, error) {
	imgs, err := b.nodeImages(ctx)
	if err == nil {
		return imgs, nil
	}
	if !errdefs.IsPermissionDenied(err) {
		return nil, err
	}
	pods, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, wrap(err, "list images in use")
	}
	seen := map[string]int{}
	var out []backends.Image
	add := func(img backends.Image) {
		if i, ok := seen[img.ID]; ok {
			for _, t := range img.Tags {
				if !contains(out[i].Tags, t) {
					out[i].Tags = append(out[i].Tags, t)
				}
			}
			return
		}
		seen[img.ID] = len(out)
		out = append(out, img)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if id := imageID(cs.ImageID); id != "" {
				add(backends.Image{ID: id, Tags: []string{normalize(cs.Image)}})
			}
		}
	}
	b.mu.Lock()
	for _, img := range b.images {
		add(img)
	}
	b.mu.Unlock()
	return out, nil
}

// nodeImages reads every node's image list (PermissionDenied without
// cluster-wide read access to nodes).
func (b *Backend) nodeImages(ctx context.Context) ([]backends.Image, error) {
	nodes, err := b.core.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, translate(err)
	}
	byID := map[string]*backends.Image{}
	var order []string
	for _, n := range nodes.Items {
		for _, ci := range n.Status.Images {
			img := backends.Image{Size: ci.SizeBytes}
			for _, name := range ci.Names {
				if _, digest, ok := strings.Cut(name, "@"); ok {
					img.Digests = append(img.Digests, name)
					if img.ID == "" {
						img.ID = digest
					}
				} else {
					img.Tags = append(img.Tags, name)
				}
			}
			if img.ID == "" {
				img.ID = "sha256:" + shortHash(strings.Join(ci.Names, ","))
			}
			if have, ok := byID[img.ID]; ok {
				for _, t := range img.Tags {
					if !contains(have.Tags, t) {
						have.Tags = append(have.Tags, t)
					}
				}
				continue
			}
			byID[img.ID] = &img
			order = append(order, img.ID)
		}
	}
	out := make([]backends.Image, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

// probe asks a node about an image with a pod that cannot run anything:
// with policy Never, ErrImageNeverPull means absent; otherwise the node
// pulls as the policy says, and a pull error is the answer. Reaching the
// container's start (which fails: no such command) means the node has it.
func (b *Backend) probe(ctx context.Context, ref string, policy corev1.PullPolicy) (backends.Image, error) {
	key := normalize(ref)
	if policy == corev1.PullNever {
		b.mu.Lock()
		img, ok := b.images[key]
		b.mu.Unlock()
		if ok {
			return img, nil
		}
	}
	pods := b.core.Pods(b.cfg.namespace)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "cornus-image-probe-",
			Labels:       map[string]string{labelManagedBy: managedBy, labelKind: kindProbe},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr(false), EnableServiceLinks: ptr(false),
			TerminationGracePeriodSeconds: ptr(int64(0)),
			Containers: []corev1.Container{{
				Name: "probe", Image: ref, ImagePullPolicy: policy,
				Command: []string{"/.cornus-image-probe-runs-nothing"},
			}},
		},
	}
	p, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return backends.Image{}, wrap(err, "image %s (probe pod)", ref)
	}
	defer func() {
		_ = pods.Delete(context.WithoutCancel(ctx), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
	}()
	wctx, cancel := context.WithTimeout(ctx, b.cfg.startTimeout+3*time.Minute)
	defer cancel()
	var img backends.Image
	err = b.watchPod(wctx, p.Name, func(p *corev1.Pod) (bool, error) {
		if p == nil {
			return false, fmt.Errorf("image %s: the probe pod was deleted: %w", ref, errdefs.ErrAborted)
		}
		if len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		cs := p.Status.ContainerStatuses[0]
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull":
				return false, fmt.Errorf("image %s: no node has it: %w", ref, errdefs.ErrNotFound)
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
				return false, fmt.Errorf("image %s: the node could not pull it: %s: %w", ref, w.Message, errdefs.ErrNotFound)
			case "ContainerCreating", "":
				return false, nil
			}
		}
		if cs.ImageID == "" && cs.State.Waiting == nil && cs.State.Terminated == nil {
			return false, nil
		}
		img = backends.Image{ID: imageID(cs.ImageID), Tags: []string{key}}
		if img.ID == "" {
			img.ID = "sha256:" + shortHash(key)
		}
		if strings.Contains(cs.ImageID, "@") {
			img.Digests = []string{cs.ImageID}
		}
		return true, nil
	})
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return backends.Image{}, fmt.Errorf("image %s: the probe pod did not get the image in time: %w", ref, errdefs.ErrUnavailable)
	}
	if err != nil {
		return backends.Image{}, err
	}
	b.mu.Lock()
	b.images[key] = img
	b.mu.Unlock()
	return img, nil
}

// imageID is the image's ID from a container status's imageID
// (docker.io/x@sha256:..., or sha256:...).
func imageID(s string) string {
	if _, d, ok := strings.Cut(s, "@"); ok {
		return d
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
