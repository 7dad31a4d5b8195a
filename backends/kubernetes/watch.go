package kubernetes

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// watchPod calls check with the pod named name each time it changes (nil
// once it is gone), starting with its current state, until check says
// done or fails, or ctx ends. A watch the server closes is resumed.
func (b *Backend) watchPod(ctx context.Context, name string, check func(*corev1.Pod) (bool, error)) error {
	pods := b.core.Pods(b.cfg.namespace)
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	for {
		list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return wrap(err, "watch pod %s", name)
		}
		var cur *corev1.Pod
		if len(list.Items) > 0 {
			cur = &list.Items[0]
		}
		if done, err := check(cur); done || err != nil {
			return err
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
		if err != nil {
			return wrap(err, "watch pod %s", name)
		}
		done, err := drainPodWatch(ctx, w, check)
		w.Stop()
		if done || err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select { // the server ended the watch: list again
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func drainPodWatch(ctx context.Context, w watch.Interface, check func(*corev1.Pod) (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Error:
				if st, ok := ev.Object.(*metav1.Status); ok && st.Code == 410 {
					return false, nil // expired: list again
				}
				return false, fmt.Errorf("watch: %v", apierrors.FromObject(ev.Object))
			case watch.Deleted:
				if done, err := check(nil); done || err != nil {
					return done, err
				}
			case watch.Added, watch.Modified:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					if done, err := check(p); done || err != nil {
						return done, err
					}
				}
			}
		}
	}
}

// safetyNet is how long a wait driven by changes looks again without one:
// a watch may be refused (no watch verb) or between two openings.
const safetyNet = time.Second

// changes signals, coalesced, each change of the pods podSel selects and,
// when dep is set, of that Deployment, until ctx ends. A watch the server
// ends or refuses is opened again a second later, with a signal, so that a
// change in the gap is looked at.
func (b *Backend) changes(ctx context.Context, podSel, dep string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	follow := func(open func() (watch.Interface, error)) {
		for {
			if w, err := open(); err == nil {
				for range w.ResultChan() {
					signal()
				}
				w.Stop()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				signal()
			}
		}
	}
	go follow(func() (watch.Interface, error) {
		return b.core.Pods(b.cfg.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: podSel})
	})
	if dep != "" {
		sel := fields.OneTermEqualSelector("metadata.name", dep).String()
		go follow(func() (watch.Interface, error) {
			return b.apps.Deployments(b.cfg.namespace).Watch(ctx, metav1.ListOptions{FieldSelector: sel})
		})
	}
	return ch
}
