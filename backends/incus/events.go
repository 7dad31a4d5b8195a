package incus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/backends/internal/journal"
)

// Container events come from two kinds of journal (backends/internal/
// journal), so history survives the process that caused it:
//   - the host journal, <data dir>/incus/events, written by this backend
//     for create, destroy, stop, kill, pause, unpause and rename;
//   - each container's own, events/ in its record directory, written by
//     its init's monitor for start, die and health_status (the monitor
//     runs inside the container and names the container by its instance
//     name; the host never lets a container write to a directory it
//     shares with others).
//
// Events merges them by time. Remove moves a container's journal into
// the host journal (with its container ID) before deleting the record
// directory, so a removed container's history stays.

// eventPoll is how often Events looks for new entries.
const eventPoll = 100 * time.Millisecond

// maxEventLine bounds one journal line read back.
const maxEventLine = 64 << 10

func (b *Backend) journal() *journal.Journal {
	return journal.Open(filepath.Join(b.cfg.dataDir, "events"))
}

// event appends one container event for instance in; an event that
// cannot be written is lost, the operation that caused it is not failed
// for it.
func (b *Backend) event(action string, in instance) {
	_ = b.journal().Append(eventOf(action, in))
}

func eventOf(action string, in instance) journal.Event {
	e := journal.Event{Action: action, ID: cmpOr(in.Config[keyID], in.Name), Name: cmpOr(in.Config[keyName], in.Name), Image: in.Config[keyImage]}
	_ = json.Unmarshal([]byte(in.Config[keyLabels]), &e.Labels)
	return e
}

// ctrEventsDir is the monitor's journal directory as the container sees it.
func ctrEventsDir(name string) string { return ctrRecords + "/" + name + "/events" }

// importEvents moves the journal of in's monitor into the host journal
// (its times kept, its ID and name the container's), before the record
// directory goes.
func (b *Backend) importEvents(in instance) {
	dir := in.Config[keyDir]
	if dir == "" {
		return
	}
	base := eventOf("", in)
	for _, p := range []string{"events.jsonl.1", "events.jsonl"} {
		src := &tail{path: filepath.Join(dir, "events", p)}
		for _, e := range src.read() {
			e.ID, e.Name, e.Image, e.Labels = base.ID, base.Name, base.Image, base.Labels
			_ = b.journal().Append(e)
		}
	}
}

// Events streams container events: history from Since (all journals,
// merged by time), then live ones, until Until or ctx ends. It does not
// confirm the subscription (Subscribed): an init killed with its
// instance reports no die, so a read cache must not rely on these.
func (b *Backend) Events(ctx context.Context, o backends.EventOptions) (<-chan backends.Event, <-chan error) {
	out := make(chan backends.Event)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		dir := filepath.Join(b.cfg.dataDir, "events")
		f := &follower{b: b, rotated: filepath.Join(dir, "events.jsonl.1"), host: &tail{path: filepath.Join(dir, "events.jsonl")},
			ctrs: map[string]*tail{}, seen: map[eventKey]bool{}}
		since := o.Since
		if since.IsZero() {
			since = time.Now() // no history asked for: live events only
		}
		for {
			evs := f.poll(ctx)
			for _, e := range evs {
				if e.Time.Before(since) {
					continue
				}
				if !o.Until.IsZero() && e.Time.After(o.Until) {
					return
				}
				network := e.Action == "connect" || e.Action == "disconnect"
				if network && !o.Networks || !network && !backends.MatchLabels(e.Labels, o.Labels) {
					continue
				}
				select {
				case out <- backends.Event(e):
				case <-ctx.Done():
					return
				}
			}
			if !o.Until.IsZero() && time.Now().After(o.Until) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(eventPoll):
			}
		}
	}()
	return out, errc
}

// eventKey identifies an event read from a container's journal, so the
// same event moved into the host journal by Remove is not sent twice.
type eventKey struct {
	t      int64
	action string
	id     string
}

// follower reads every journal from where it left off.
type follower struct {
	b       *Backend
	started bool
	rotated string           // the host journal's older generation
	host    *tail            // the host journal
	ctrs    map[string]*tail // record directory name → its monitor's journal
	// ids maps an instance name to its container ID, name, image and labels.
	ids  map[string]journal.Event
	seen map[eventKey]bool
}

// poll returns the events appended since the last call, in time order.
func (f *follower) poll(ctx context.Context) []journal.Event {
	var hostEvs []journal.Event
	if !f.started {
		f.started = true
		hostEvs = (&tail{path: f.rotated}).read() // history's older half
	} else if ino := inodeOf(f.host.path); f.host.ino != 0 && ino != f.host.ino && inodeOf(f.rotated) == f.host.ino {
		// Rotated since the last poll: finish the old generation first.
		old := &tail{path: f.rotated, ino: f.host.ino, off: f.host.off}
		hostEvs = old.read()
		f.host.ino, f.host.off = 0, 0
	}
	hostEvs = append(hostEvs, f.host.read()...)
	var evs []journal.Event
	for _, e := range hostEvs {
		if e.Action == "rename" || e.Action == "create" {
			f.ids = nil // names changed: look them up again
		}
		if !f.seen[eventKey{e.Time.UnixNano(), e.Action, e.ID}] {
			evs = append(evs, e)
		}
	}
	dirs, _ := os.ReadDir(f.b.cfg.recordsDir())
	var ctrEvs []journal.Event
	for _, d := range dirs {
		t := f.ctrs[d.Name()]
		if t == nil {
			t = &tail{path: filepath.Join(f.b.cfg.recordsDir(), d.Name(), "events", "events.jsonl")}
			f.ctrs[d.Name()] = t
		}
		for _, e := range t.read() {
			e.ID = d.Name() // the instance name, whatever the container wrote
			ctrEvs = append(ctrEvs, e)
		}
	}
	if len(ctrEvs) > 0 {
		f.refreshIDs(ctx, ctrEvs)
		for _, e := range ctrEvs {
			who, ok := f.ids[e.ID]
			if !ok {
				continue // removed meanwhile: Remove moved its events to the host journal
			}
			e.ID, e.Name, e.Image, e.Labels = who.ID, who.Name, who.Image, who.Labels
			if len(f.seen) > 10000 {
				clear(f.seen)
			}
			f.seen[eventKey{e.Time.UnixNano(), e.Action, e.ID}] = true
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b journal.Event) int { return a.Time.Compare(b.Time) })
	return evs
}

// refreshIDs lists the instances when an event names one not known yet
// (the first time, a new container, or after a rename).
func (f *follower) refreshIDs(ctx context.Context, evs []journal.Event) {
	fresh := f.ids != nil
	for _, e := range evs {
		if _, ok := f.ids[e.ID]; !ok {
			fresh = false
		}
	}
	if fresh {
		return
	}
	all, err := f.b.listInstances(ctx)
	if err != nil {
		return
	}
	f.ids = map[string]journal.Event{}
	for _, in := range all {
		f.ids[in.Name] = eventOf("", in)
	}
}

func inodeOf(p string) uint64 {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return 0
	}
	return st.Ino
}

// tail is one journal file read incrementally; a file replaced (rotated)
// is read from its start.
type tail struct {
	path string
	ino  uint64
	off  int64
}

// read returns the complete entries appended since the last read. It
// opens no symlink and reads only regular files: containers write their
// own journals.
func (t *tail) read() []journal.Event {
	fd, err := syscall.Open(t.path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), t.path)
	defer f.Close()
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil
	}
	if st.Ino != t.ino || st.Size < t.off {
		t.ino, t.off = st.Ino, 0
	}
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return nil
	}
	var out []journal.Event
	r := bufio.NewReaderSize(f, 32<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // an oversized line: skip it
				t.off += int64(len(line))
				line, err = r.ReadSlice('\n')
			}
			t.off += int64(len(line))
			continue
		}
		if err != nil {
			return out // a partial last line waits for its newline
		}
		t.off += int64(len(line))
		var e journal.Event
		if len(line) <= maxEventLine && json.Unmarshal(bytes.TrimSpace(line), &e) == nil && e.Action != "" {
			out = append(out, e)
		}
	}
}
