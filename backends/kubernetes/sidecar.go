package kubernetes

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// A replica's companion (the caretaker) runs in the replica's pod as a
// native sidecar: an init container with restartPolicy Always (Kubernetes
// 1.29 and later). It starts before the app container, whose start the
// kubelet holds until the sidecar's startup probe (the companion's Ready
// command) succeeds; it shares the pod's network namespace, so the
// egress role's loopback proxy and nftables redirect apply to the app;
// it stops after the app. Directories it shares with the app are
// emptyDirs: where it mounts a file system in one (a client-local
// mount), its mount is Bidirectional (which Kubernetes allows only to a
// privileged container) and the app's HostToContainer.

// sidecarReadyTries bounds the startup probe: one try a second, as long
// as the engine waits for a companion elsewhere.
const sidecarReadyTries = 30

// sidecarContainer names the sidecar in the pod, apart from app.
func sidecarContainer(name, app string) string {
	n := dnsLabel("cornus-"+name, 63)
	if n == app {
		n = dnsLabel(n+"-sidecar", 63)
	}
	return n
}

// renderSidecar adds cs.Sidecar to the pod: its init container and the
// directories it shares with app. Its environment goes to the files
// Secret (it carries the companion's token), not into the record. It does
// no I/O.
func renderSidecar(in renderInput, pod *corev1.PodSpec, app *corev1.Container, files map[string][]byte) error {
	sc := in.cs.Sidecar
	s := sc.Spec
	if s.Image == "" {
		return invalidf("sidecar %s: no image", sc.Name)
	}
	c := corev1.Container{
		Name:            sidecarContainer(sc.Name, app.Name),
		Image:           s.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         slices.Clone(s.Entrypoint),
		Args:            slices.Clone(s.Command),
		WorkingDir:      s.WorkingDir,
		RestartPolicy:   ptr(corev1.ContainerRestartPolicyAlways),
		SecurityContext: &corev1.SecurityContext{},
	}
	if err := renderSecurity(s, c.SecurityContext, in.cfg.userNS); err != nil {
		return fmt.Errorf("sidecar %s: %w", sc.Name, err)
	}
	for i, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		key := fmt.Sprintf("sidecar-env-%d", i)
		files[key] = []byte(v)
		c.Env = append(c.Env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: in.name}, Key: key},
		}})
	}
	if len(sc.Ready) > 0 {
		c.StartupProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: slices.Clone(sc.Ready)}},
			PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: sidecarReadyTries, SuccessThreshold: 1,
		}
	}
	propagate := false
	mounted := map[string]bool{}
	for i, d := range sc.Shared {
		if d.Name == "" || d.SidecarTarget == "" {
			return invalidf("sidecar %s: shared directory %d: a name and the sidecar's target are required", sc.Name, i)
		}
		vol := dnsLabel("cornus-shared-"+d.Name, 63)
		if !mounted[vol] {
			mounted[vol] = true
			dir := &corev1.EmptyDirVolumeSource{}
			if d.Memory {
				dir.Medium = corev1.StorageMediumMemory
			}
			pod.Volumes = append(pod.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{EmptyDir: dir}})
			m := corev1.VolumeMount{Name: vol, MountPath: d.SidecarTarget}
			if d.Propagate {
				m.MountPropagation = ptr(corev1.MountPropagationBidirectional)
				propagate = true
			}
			c.VolumeMounts = append(c.VolumeMounts, m)
		}
		if d.Target == "" {
			continue
		}
		m := corev1.VolumeMount{Name: vol, MountPath: d.Target, ReadOnly: d.ReadOnly}
		if d.Propagate {
			m.MountPropagation = ptr(corev1.MountPropagationHostToContainer)
		}
		app.VolumeMounts = append(app.VolumeMounts, m)
	}
	if propagate && (c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged) {
		return invalidf("sidecar %s: it mounts file systems for its container (Bidirectional propagation), which Kubernetes allows only to a privileged container", sc.Name)
	}
	pod.InitContainers = append(pod.InitContainers, c)
	return nil
}

// sidecarFailure is why a pod's sidecar keeps it from starting ("" when
// nothing does): an image that cannot be pulled, a container that cannot
// be made, or one that keeps failing (its startup probe, or its exit).
func sidecarFailure(p *corev1.Pod) string {
	for _, s := range p.Status.InitContainerStatuses {
		w := s.State.Waiting
		if w == nil {
			continue
		}
		if isStartFailure(w.Reason) || (w.Reason == "CrashLoopBackOff" && s.RestartCount >= 2) {
			msg := strings.TrimSpace(w.Message)
			if t := s.LastTerminationState.Terminated; t != nil && t.Message != "" {
				msg += " (" + strings.TrimSpace(t.Message) + ")"
			}
			return fmt.Sprintf("its sidecar %s (image %s): %s: %s (kubectl logs %s -c %s)", s.Name, s.Image, w.Reason, msg, p.Name, s.Name)
		}
	}
	return ""
}
