package kubernetes

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/spec"
)

// A healthcheck is the container's readiness probe, with the Compose
// timings. Docker's health states are read back from the pod: healthy is
// Ready; unhealthy is not Ready after at least `retries` failed probes
// since the container started, counted from the kubelet's Unhealthy
// events once the start period is over (the kubelet keeps no failure
// count in the pod's status); otherwise starting. Failed probes do not
// restart the container, as in Docker, unless CORNUS_K8S_LIVENESS=1 adds
// the same probe as a liveness probe.

// healthInfo is what the kubelet's probe events say about one container.
type healthInfo struct {
	failures int
	log      []backends.HealthResult
}

func (h healthInfo) status(rec record, st podState) backends.Health {
	switch {
	case st.ready:
		return backends.HealthHealthy
	case h.failures >= rec.HealthRetries && time.Since(st.startedAt) >= rec.HealthStart:
		return backends.HealthUnhealthy
	}
	return backends.HealthStarting
}

// needsHealth reports whether the container's health must be read from
// events: it has a healthcheck, runs, and is not Ready.
func needsHealth(rec record, pod *corev1.Pod) bool {
	if rec.Config.Healthcheck == nil || pod == nil {
		return false
	}
	st := stateOf(pod)
	return st.state == backends.StateRunning && !st.ready
}

// healthOf counts the failed probes of pod's container since it started.
func (b *Backend) healthOf(ctx context.Context, pod *corev1.Pod) healthInfo {
	var h healthInfo
	sel := fields.Set{"involvedObject.uid": string(pod.UID), "reason": "Unhealthy"}.AsSelector().String()
	evs, err := b.core.Events(b.cfg.namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return h
	}
	started := stateOf(pod).startedAt
	slices.SortFunc(evs.Items, func(x, y corev1.Event) int { return eventTime(x).Compare(eventTime(y)) })
	for _, e := range evs.Items {
		msg, ok := strings.CutPrefix(e.Message, "Readiness probe failed: ")
		if !ok {
			if msg, ok = strings.CutPrefix(e.Message, "Liveness probe failed: "); !ok {
				continue
			}
		}
		at := eventTime(e)
		if at.Before(started.Add(-time.Second)) {
			continue // an earlier run's
		}
		n := int(e.Count)
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		h.failures += max(n, 1)
		h.log = append(h.log, backends.HealthResult{Start: at, End: at, ExitCode: 1, Output: msg})
	}
	if len(h.log) > 5 {
		h.log = h.log[len(h.log)-5:]
	}
	return h
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// specHealthcheck is a resolved healthcheck as Inspect reports it.
func specHealthcheck(h *backends.Healthcheck) *spec.Healthcheck {
	out := &spec.Healthcheck{Test: slices.Clone(h.Test)}
	dur := func(d time.Duration) *spec.Duration {
		if d == 0 {
			return nil
		}
		return spec.DurationOf(d)
	}
	out.Interval, out.Timeout, out.StartPeriod, out.StartInterval = dur(h.Interval), dur(h.Timeout), dur(h.StartPeriod), dur(h.StartInterval)
	if h.Retries > 0 {
		out.Retries = ptr(h.Retries)
	}
	return out
}
