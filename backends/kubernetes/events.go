package kubernetes

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cornus-dev/cornus/backends"
)

// Container events are Kubernetes Events: cornus records the lifecycle
// steps it takes (create, start, kill, die, stop, rename, destroy,
// connect, disconnect) as Events on the container's record (source
// "cornus"), so `docker events --since` finds them from any process for
// as long as the cluster keeps Events (an hour by default). What happens
// without cornus (an exit, a kubelet restart, a health change) is read
// live from the pods.

// Annotations of cornus's Events (Kubernetes event times have whole
// seconds; Docker's order needs more).
const (
	annEventTime = "cornus.dev/time"
	annEventID   = "cornus.dev/id"
	annEventImg  = "cornus.dev/image"
	annExitCode  = "cornus.dev/exit-code"
	eventSource  = "cornus"
)

// event records a container event; one that cannot be written is lost,
// the operation that caused it is not failed for it.
func (b *Backend) event(ctx context.Context, about corev1.ObjectReference, rec record, action string, exitCode *int) {
	now := time.Now()
	lj, _ := json.Marshal(rec.Labels)
	ann := map[string]string{annEventTime: now.UTC().Format(time.RFC3339Nano), annEventID: rec.ID, annEventImg: rec.Image, annLabels: string(lj), annName: rec.Name}
	if exitCode != nil {
		ann[annExitCode] = strconv.Itoa(*exitCode)
	}
	host, _ := os.Hostname()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: about.Name + ".", Annotations: ann, Labels: map[string]string{labelManagedBy: managedBy}},
		InvolvedObject: about,
		Reason:         action, Message: "container " + rec.Name + ": " + action, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: eventSource, Host: host},
		FirstTimestamp: metav1.NewTime(now), LastTimestamp: metav1.NewTime(now), Count: 1,
	}
	_, _ = b.core.Events(b.cfg.namespace).Create(context.WithoutCancel(ctx), ev, metav1.CreateOptions{})
}

// fromEvent reads one of cornus's Events back.
func fromEvent(e *corev1.Event) (backends.Event, bool) {
	if e.Source.Component != eventSource || e.Annotations[annEventID] == "" {
		return backends.Event{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, e.Annotations[annEventTime])
	if err != nil {
		t = e.LastTimestamp.Time
	}
	out := backends.Event{Time: t, Action: e.Reason, ID: e.Annotations[annEventID], Name: e.Annotations[annName], Image: e.Annotations[annEventImg]}
	_ = json.Unmarshal([]byte(e.Annotations[annLabels]), &out.Labels)
	if v, ok := e.Annotations[annExitCode]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			out.ExitCode = &n
		}
	}
	return out, true
}

// Events streams container events: cornus's since o.Since, then live
// ones (cornus's and what the pods show), until o.Until or ctx ends.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		if err := b.events(ctx, o, out); err != nil && ctx.Err() == nil {
			errc <- err
		}
	}()
	return out, errc
}

func (b *Backend) events(ctx context.Context, o backends.EventOptions, out chan<- backends.Event) error {
	sel := fields.OneTermEqualSelector("source", eventSource).String()
	live := o.Until.IsZero() || o.Until.After(time.Now())
	// The history is read whole, however long that takes: Until bounds
	// the live part only (a namespace busy with runs holds thousands of
	// Events for an hour, and a deadline over the listing lost them all).
	history, rv, err := b.pastEvents(ctx, sel, !o.Since.IsZero())
	if err != nil {
		return err
	}
	send := sender(ctx, o, out)
	var lw liveWatch
	if live {
		// Watching starts before the history is sent: nothing falls
		// between the two.
		if lw, err = b.watchLive(ctx, sel, rv); err != nil {
			return err
		}
		defer lw.stop()
		if o.Subscribed != nil {
			o.Subscribed()
		}
	}
	for _, e := range history {
		if !send(e) {
			return nil
		}
	}
	if !live {
		return nil
	}
	return lw.follow(ctx, o.Until, send)
}

// sender sends an event the options select; false when ctx ended.
func sender(ctx context.Context, o backends.EventOptions, out chan<- backends.Event) func(backends.Event) bool {
	return func(e backends.Event) bool {
		network := e.Action == "connect" || e.Action == "disconnect"
		if (network && !o.Networks) || (!network && !backends.MatchLabels(e.Labels, o.Labels)) {
			return true
		}
		if !o.Since.IsZero() && e.Time.Before(o.Since) || !o.Until.IsZero() && e.Time.After(o.Until) {
			return true
		}
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// liveWatch is the live part of an events stream: cornus's own Events
// and the pods' changes (exits, restarts, health).
type liveWatch struct {
	events, pods watch.Interface
	changes      *podEvents
}

// watchLive watches Events from version rv and the pods from now; the
// pods listed now are the baseline, the watch from the listing's version
// sends only what changed after it.
func (b *Backend) watchLive(ctx context.Context, sel, rv string) (liveWatch, error) {
	ew, err := b.core.Events(b.cfg.namespace).Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
	if err != nil {
		return liveWatch{}, wrap(err, "watch events")
	}
	podSel := labels.Set{labelManagedBy: managedBy}.String()
	list, err := b.core.Pods(b.cfg.namespace).List(ctx, metav1.ListOptions{LabelSelector: podSel})
	if err != nil {
		ew.Stop()
		return liveWatch{}, wrap(err, "list pods")
	}
	pw, err := b.core.Pods(b.cfg.namespace).Watch(ctx, metav1.ListOptions{LabelSelector: podSel, ResourceVersion: list.ResourceVersion})
	if err != nil {
		ew.Stop()
		return liveWatch{}, wrap(err, "watch pods")
	}
	return liveWatch{events: ew, pods: pw, changes: newPodEvents(list.Items)}, nil
}

func (lw liveWatch) stop() {
	lw.events.Stop()
	lw.pods.Stop()
}

// follow sends what the watches report until ctx ends, until passes (a
// second late, for events stamped just before it) or a watch closes.
func (lw liveWatch) follow(ctx context.Context, until time.Time, send func(backends.Event) bool) error {
	var deadline <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until.Add(time.Second)))
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline:
			return nil
		case ev, ok := <-lw.events.ResultChan():
			if !ok {
				return nil
			}
			if e, ok := ev.Object.(*corev1.Event); ok && ev.Type == watch.Added {
				if be, ok := fromEvent(e); ok && !send(be) {
					return nil
				}
			}
		case ev, ok := <-lw.pods.ResultChan():
			if !ok {
				return nil
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod || ev.Type == watch.Deleted {
				continue
			}
			for _, e := range lw.changes.changes(p) {
				if !send(e) {
					return nil
				}
			}
		}
	}
}

// podEvents turns pod updates into the events cornus did not record:
// a container that exited or was restarted by the kubelet, health changes.
type podEvents struct {
	mu   sync.Mutex
	seen map[string]podMark
}

type podMark struct {
	restarts int
	exited   time.Time
	ready    bool
}

// newPodEvents starts from the pods as they were when the stream began:
// what they show then is no news. A pod seen first later is new, and
// everything it shows is (a pod that came and ended before its first
// sighting died after the stream began).
func newPodEvents(baseline []corev1.Pod) *podEvents {
	pe := &podEvents{seen: map[string]podMark{}}
	for i := range baseline {
		pe.seen[string(baseline[i].UID)] = markOf(&baseline[i])
	}
	return pe
}

func markOf(p *corev1.Pod) podMark {
	st := stateOf(p)
	m := podMark{restarts: st.restartCount, ready: st.ready}
	if t := lastExit(p); t != nil {
		m.exited = t.finishedAt
	}
	return m
}

func (pe *podEvents) changes(p *corev1.Pod) []backends.Event {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	prev := pe.seen[string(p.UID)]
	st := stateOf(p)
	cur := markOf(p)
	pe.seen[string(p.UID)] = cur
	if p.DeletionTimestamp != nil {
		return nil // a stop by cornus records its own events
	}
	base := backends.Event{Time: time.Now(), ID: p.Annotations[annEventID], Name: p.Annotations[annName]}
	_ = json.Unmarshal([]byte(p.Annotations[annLabels]), &base.Labels)
	if len(p.Spec.Containers) > 0 {
		base.Image = p.Spec.Containers[0].Image
	}
	var out []backends.Event
	if cur.exited.After(prev.exited) {
		e := base
		e.Action = "die"
		code := st.exitCode
		e.ExitCode = &code
		out = append(out, e)
	}
	if cur.restarts > prev.restarts && st.state == backends.StateRunning {
		e := base
		e.Action = "start"
		out = append(out, e)
	}
	if cur.ready != prev.ready && len(p.Spec.Containers) > 0 && p.Spec.Containers[0].ReadinessProbe != nil {
		e := base
		e.Action = "health_status: unhealthy"
		if cur.ready {
			e.Action = "health_status: healthy"
		}
		out = append(out, e)
	}
	return out
}

// eventsPage bounds one page of the history listing.
const eventsPage = 500

// pastEvents lists cornus's Events page by page, oldest first when want
// is set (else only the resource version to watch from), and returns the
// resource version of the listing.
func (b *Backend) pastEvents(ctx context.Context, sel string, want bool) ([]backends.Event, string, error) {
	evs := b.core.Events(b.cfg.namespace)
	opts := metav1.ListOptions{FieldSelector: sel, Limit: eventsPage}
	if !want {
		opts.Limit = 1
	}
	var history []backends.Event
	rv := ""
	for {
		page, err := evs.List(ctx, opts)
		if err != nil {
			return nil, "", wrap(err, "list events")
		}
		if rv == "" {
			rv = page.ResourceVersion // the snapshot every page is read from
		}
		if !want {
			return nil, rv, nil
		}
		for i := range page.Items {
			if e, ok := fromEvent(&page.Items[i]); ok {
				history = append(history, e)
			}
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	sort.SliceStable(history, func(i, j int) bool { return history[i].Time.Before(history[j].Time) })
	return history, rv, nil
}
