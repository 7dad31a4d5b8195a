package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cornus-dev/cornus/backends"
)

// TestEventsReplayPastUntil locks down `docker events --since --until`
// through the proxy (issue 10): a window that ended before the call is
// replayed whole. The history listing once ran under a deadline of
// until+1s, so a window ending more than a second ago (or a listing of a
// busy namespace's Events taking longer) returned nothing.
func TestEventsReplayPastUntil(t *testing.T) {
	b := newTestBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	project := fmt.Sprintf("evreplay%d", time.Now().UnixNano()%1e6)
	since := time.Now().Add(-time.Second)
	c, err := b.Create(ctx, backends.ContainerSpec{
		Project: project, App: "app", Replica: 1, Name: project + "-app-1",
		Labels: map[string]string{backends.LabelProject: project},
		Image:  "cornus-test/busybox:1", Command: []string{"sleep", "300"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), c.ID, backends.RemoveOptions{Force: true}) })
	if err := b.Start(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	grace := time.Second
	if err := b.Stop(ctx, c.ID, backends.StopOptions{Timeout: &grace}); err != nil {
		t.Fatal(err)
	}
	until := time.Now()
	time.Sleep(1500 * time.Millisecond) // the window ended well before the call
	events, errs := b.Events(ctx, backends.EventOptions{Since: since, Until: until, Labels: map[string]string{backends.LabelProject: project}})
	var got []string
	for e := range events {
		if e.ID == c.ID {
			got = append(got, e.Action)
		}
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"create", "start", "die"} {
		if !slices.Contains(got, want) {
			t.Errorf("replay %v lacks %q", got, want)
		}
	}
}

// exitedPod is a pod whose one container exited with code.
func exitedPod(uid string, code int32, at time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}}}}
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, StartedAt: metav1.NewTime(at.Add(-time.Second)), FinishedAt: metav1.NewTime(at)}}}}
	return p
}

// Locks down a flake of the kubernetes lane (a die event missing): the
// pods the stream starts with are its baseline; a pod it first sees later,
// already ended, died after the stream began, and its die is sent.
func TestPodFirstSeenEndedDies(t *testing.T) {
	now := time.Now()
	pe := newPodEvents([]corev1.Pod{*exitedPod("before", 1, now.Add(-time.Minute))})
	if evs := pe.changes(exitedPod("before", 1, now.Add(-time.Minute))); len(evs) != 0 {
		t.Errorf("a pod that had ended before the stream began: %v, want no events", evs)
	}
	evs := pe.changes(exitedPod("after", 3, now))
	if len(evs) != 1 || evs[0].Action != "die" || evs[0].ExitCode == nil || *evs[0].ExitCode != 3 {
		t.Fatalf("a pod first seen after the stream began, already ended: %+v, want one die with exit code 3", evs)
	}
}
