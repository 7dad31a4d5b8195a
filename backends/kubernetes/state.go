package kubernetes

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cornus-dev/cornus/backends"
)

// podState is what a pod says about its (only) container, in Docker's
// terms: state, exit code, times, restarts.
type podState struct {
	state        backends.State
	exitCode     int
	startedAt    time.Time
	finishedAt   time.Time
	restartCount int
	oomKilled    bool
	ready        bool
	err          string
	// waitingReason is why the container is not running yet
	// (ContainerCreating, ErrImagePull, CrashLoopBackOff, ...).
	waitingReason, waitingMessage string
}

// stateOf reads a pod's container status. A pod without one yet is
// "created" (scheduling, pulling); a running container is "running"; one
// the kubelet will restart is "restarting"; a finished one "exited".
func stateOf(pod *corev1.Pod) podState {
	st := podState{state: backends.StateCreated}
	if len(pod.Status.ContainerStatuses) == 0 {
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			st.state, st.err = backends.StateExited, pod.Status.Message
			st.exitCode = 128
		}
		return st
	}
	cs := pod.Status.ContainerStatuses[0]
	st.restartCount, st.ready = int(cs.RestartCount), cs.Ready
	if t := cs.LastTerminationState.Terminated; t != nil {
		st.exitCode, st.startedAt, st.finishedAt = int(t.ExitCode), t.StartedAt.Time, t.FinishedAt.Time
		st.oomKilled = t.Reason == "OOMKilled"
	}
	switch {
	case cs.State.Running != nil:
		st.state, st.startedAt = backends.StateRunning, cs.State.Running.StartedAt.Time
	case cs.State.Terminated != nil:
		t := cs.State.Terminated
		st.state, st.exitCode = backends.StateExited, int(t.ExitCode)
		st.startedAt, st.finishedAt, st.oomKilled = t.StartedAt.Time, t.FinishedAt.Time, t.Reason == "OOMKilled"
		if t.Reason == "StartError" || t.Reason == "ContainerCannotRun" {
			st.err = t.Message
		}
		if willRestart(pod, int(t.ExitCode)) {
			st.state = backends.StateRestarting
		}
	case cs.State.Waiting != nil:
		w := cs.State.Waiting
		st.waitingReason, st.waitingMessage = w.Reason, w.Message
		if cs.LastTerminationState.Terminated != nil && willRestart(pod, st.exitCode) {
			st.state = backends.StateRestarting
		}
	}
	return st
}

// willRestart reports whether the kubelet restarts a container that
// exited with code in pod (its restart policy, and the pod not going away).
func willRestart(pod *corev1.Pod, code int) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyAlways:
		return true
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return false
}

// view is the container as List and Inspect report it: the record, with
// the pod's state when it has one, else the record's last state.
func (b *Backend) view(rec record, pod *corev1.Pod, health healthInfo) backends.ContainerDetails {
	c := backends.Container{
		ID: rec.ID, Name: rec.Name, Image: rec.Image, Command: rec.command(),
		Labels: maps.Clone(rec.Labels), Created: rec.Created,
		Ports: rec.Ports, Mounts: rec.Mounts,
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	d := backends.ContainerDetails{Config: rec.Config}
	ls := rec.State
	c.RestartCount = ls.RestartCount
	switch {
	case pod == nil && !ls.Started:
		c.State = backends.StateCreated
	case pod == nil:
		c.State, c.ExitCode, c.StartedAt, c.FinishedAt = backends.StateExited, ls.ExitCode, ls.StartedAt, ls.FinishedAt
		d.OOMKilled, d.Error = ls.OOMKilled, ls.Error
	default:
		st := stateOf(pod)
		c.State, c.ExitCode, c.StartedAt, c.FinishedAt = st.state, st.exitCode, st.startedAt, st.finishedAt
		c.RestartCount = st.restartCount
		d.OOMKilled, d.Error = st.oomKilled, st.err
		if c.StartedAt.IsZero() {
			c.StartedAt = ls.StartedAt
		}
		if c.FinishedAt.IsZero() && c.State != backends.StateRunning {
			c.FinishedAt = ls.FinishedAt
		}
		if c.State == backends.StateCreated && ls.Started {
			// Started before and being started again: what it was.
			c.State, c.ExitCode = backends.StateExited, ls.ExitCode
		}
		if rec.Config.Healthcheck != nil && c.State == backends.StateRunning {
			c.Health = health.status(rec, st)
			d.HealthLog = health.log
		}
		c.ImageID = imageIDOf(pod)
		c.Networks = map[string]backends.EndpointInfo{}
		for _, n := range rec.Networks {
			c.Networks[n.Network] = backends.EndpointInfo{NetworkID: n.Object, IPAddress: pod.Status.PodIP, IPPrefixLen: 32, Aliases: n.Aliases}
		}
	}
	if c.State == backends.StateRunning && c.Health == backends.HealthNone && rec.Config.Healthcheck != nil {
		c.Health = backends.HealthStarting
	}
	d.Container = c
	return d
}

func imageIDOf(pod *corev1.Pod) string {
	if len(pod.Status.ContainerStatuses) == 0 {
		return ""
	}
	return pod.Status.ContainerStatuses[0].ImageID
}
