package kubernetes

import (
	"testing"

	"github.com/containerd/errdefs"
	corev1 "k8s.io/api/core/v1"

	"github.com/cornus-dev/cornus/backends"
)

// TestRenderSidecar locks down the native sidecar (issues 12.5, 13.3): an
// init container with restartPolicy Always, its Ready command as the
// startup probe, its environment from the Secret, an emptyDir per shared
// directory (Bidirectional in the sidecar, HostToContainer in the app; in
// memory where asked), and Bidirectional refused unless the sidecar is
// privileged.
func TestRenderSidecar(t *testing.T) {
	sc := &backends.Sidecar{
		Name:  "caretaker",
		Spec:  backends.ContainerSpec{Image: "cornus-agent:1", Env: []string{"CORNUS_CARETAKER_TOKEN=secret"}, Privileged: true, CapAdd: []string{"NET_ADMIN"}},
		Ready: []string{"/cornus", "caretaker", "ready"},
		Shared: []backends.SharedDir{
			{Name: "cornus-agent", SidecarTarget: "/cornus-shared/agent", Target: "/run/cornus-agent", ReadOnly: true},
			{Name: "cornus-mount-0", SidecarTarget: "/cornus-shared/mounts/0", Target: "/work", Propagate: true},
			{Name: "cornus-credentials", SidecarTarget: "/cornus-shared/credentials", Target: "/run/cornus-credentials", ReadOnly: true, Memory: true},
		},
	}
	in := renderInput{cs: backends.ContainerSpec{Name: "p-app-1", App: "app", Image: "busybox", Sidecar: sc}, id: "abc", name: "p-app-1-abc"}
	r, err := render(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.pod.InitContainers) != 1 || len(r.pod.Containers) != 1 {
		t.Fatalf("containers %d, init containers %d", len(r.pod.Containers), len(r.pod.InitContainers))
	}
	s, app := r.pod.InitContainers[0], r.pod.Containers[0]
	if s.Name != "cornus-caretaker" || s.RestartPolicy == nil || *s.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("sidecar %s restartPolicy %v", s.Name, s.RestartPolicy)
	}
	if p := s.StartupProbe; p == nil || p.Exec == nil || len(p.Exec.Command) != 3 || p.FailureThreshold != sidecarReadyTries {
		t.Errorf("startup probe %+v", p)
	}
	if len(s.Env) != 1 || s.Env[0].Value != "" || s.Env[0].ValueFrom == nil || s.Env[0].ValueFrom.SecretKeyRef.Name != in.name ||
		string(r.files[s.Env[0].ValueFrom.SecretKeyRef.Key]) != "secret" {
		t.Errorf("sidecar env %+v (files %v): want it from the Secret", s.Env, r.files)
	}
	if s.SecurityContext.Capabilities == nil || len(s.SecurityContext.Capabilities.Add) != 1 || app.SecurityContext.Capabilities != nil {
		t.Errorf("NET_ADMIN: sidecar %+v, app %+v", s.SecurityContext.Capabilities, app.SecurityContext.Capabilities)
	}
	prop := func(m corev1.VolumeMount) corev1.MountPropagationMode {
		if m.MountPropagation == nil {
			return ""
		}
		return *m.MountPropagation
	}
	if len(s.VolumeMounts) != 3 || prop(s.VolumeMounts[1]) != corev1.MountPropagationBidirectional || prop(s.VolumeMounts[0]) != "" {
		t.Errorf("sidecar mounts %+v", s.VolumeMounts)
	}
	if len(app.VolumeMounts) != 3 || !app.VolumeMounts[0].ReadOnly || app.VolumeMounts[1].MountPath != "/work" ||
		prop(app.VolumeMounts[1]) != corev1.MountPropagationHostToContainer {
		t.Errorf("app mounts %+v", app.VolumeMounts)
	}
	if len(r.pod.Volumes) != 3 || r.pod.Volumes[1].EmptyDir == nil || r.pod.Volumes[1].EmptyDir.Medium != "" {
		t.Errorf("volumes %+v", r.pod.Volumes)
	}
	// The credentials' directory is in memory (a tmpfs), the others on
	// the node's disk as any emptyDir.
	if d := r.pod.Volumes[2].EmptyDir; d == nil || d.Medium != corev1.StorageMediumMemory {
		t.Errorf("the credentials' volume %+v: want an emptyDir in memory", r.pod.Volumes[2])
	}

	sc.Spec.Privileged = false
	if _, err := render(in); !errdefs.IsInvalidArgument(err) {
		t.Errorf("Bidirectional without privileged: %v, want InvalidArgument", err)
	}
}
