package monitor

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/spec"
)

// Locks down the Store round trip and its error classes: NotFound for a
// missing record, InvalidArgument for an ID that is not one path element.
func TestStoreReadWriteListRemove(t *testing.T) {
	s := NewStore(t.TempDir())
	if _, err := s.Read("nope"); !errdefs.IsNotFound(err) {
		t.Fatalf("missing record: %v, want NotFound", err)
	}
	for _, id := range []string{"", ".", "..", "../x", "a/b"} {
		if err := s.Write(Record{ID: id}); !errdefs.IsInvalidArgument(err) {
			t.Errorf("id %q: %v, want InvalidArgument", id, err)
		}
	}
	grace := 3 * time.Second
	want := Record{ID: "b", Name: "web-1", Labels: map[string]string{"k": "v"}, Desired: DesiredRunning,
		Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartOnFailure, MaxRetries: 2}, StopGrace: &grace, StopSignal: syscall.SIGQUIT},
		State:       State{Status: StatusExited, ExitCode: 3, FinishedAt: time.Now().UTC().Round(0)}}
	for _, r := range []Record{want, {ID: "a"}} {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Read("b")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != RecordVersion || got.Name != "web-1" || got.Labels["k"] != "v" || *got.Supervision.StopGrace != grace ||
		got.Supervision.Restart != want.Supervision.Restart || !got.State.FinishedAt.Equal(want.State.FinishedAt) || got.State.ExitCode != 3 {
		t.Fatalf("read back %+v", got)
	}
	// A directory with no record yet is skipped.
	if err := os.MkdirAll(filepath.Join(s.Root(), "half-created"), 0o700); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" {
		t.Fatalf("list = %v, %v; want a, b", list, err)
	}
	if err := s.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read("b"); !errdefs.IsNotFound(err) {
		t.Fatalf("after remove: %v", err)
	}
	if err := s.Remove("b"); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
}

// Locks down that Remove refuses while the record's monitor lives.
func TestStoreRemoveRefusesLiveMonitor(t *testing.T) {
	s := NewStore(t.TempDir())
	ticks, _, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r := Record{ID: "x", State: State{Status: StatusRunning}, Monitor: MonitorProcess{Pid: os.Getpid(), StartTicks: ticks}}
	if err := s.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("x"); !errdefs.IsConflict(err) {
		t.Fatalf("remove with a live monitor: %v, want Conflict", err)
	}
}

// Locks down atomic writes: readers racing a writer whose records change
// size never see a partial or mixed file, and no temporary file is left.
func TestStoreWriteIsAtomic(t *testing.T) {
	s := NewStore(t.TempDir())
	if err := s.Write(Record{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	const writes = 300
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads, bad int64
	var mu sync.Mutex
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				data, err := os.ReadFile(filepath.Join(s.Root(), "r", recordName))
				var r Record
				mu.Lock()
				reads++
				if err != nil || json.Unmarshal(data, &r) != nil || r.ID != "r" || len(r.Labels["pad"]) != r.State.RestartCount {
					bad++
				}
				mu.Unlock()
			}
		})
	}
	for i := range writes {
		n := (i * 997) % 20000 // sizes jump around: a torn read would show
		r := Record{ID: "r", Labels: map[string]string{"pad": strings.Repeat("x", n)}, State: State{RestartCount: n}}
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	readers.Wait()
	if bad != 0 || reads == 0 {
		t.Fatalf("%d of %d reads saw a partial or mixed record", bad, reads)
	}
	entries, _ := os.ReadDir(filepath.Join(s.Root(), "r"))
	if len(entries) != 1 {
		t.Fatalf("record dir holds %d entries, want only record.json", len(entries))
	}
}

// Locks down Validate's field paths and class.
func TestRecordValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Supervision
		want string
	}{
		{"policy", Supervision{Restart: RestartPolicy{Name: "sometimes"}}, "supervision.restart.name"},
		{"retries on always", Supervision{Restart: RestartPolicy{Name: spec.RestartAlways, MaxRetries: 2}}, "supervision.restart.maxRetries"},
		{"negative retries", Supervision{Restart: RestartPolicy{Name: spec.RestartOnFailure, MaxRetries: -1}}, "supervision.restart.maxRetries"},
		{"signal", Supervision{StopSignal: 99}, "supervision.stopSignal"},
		{"grace", Supervision{StopGrace: ptr(-time.Second)}, "supervision.stopGrace"},
		{"test", Supervision{Healthcheck: &Healthcheck{Test: []string{"curl"}}}, "supervision.healthcheck.test"},
		{"interval", Supervision{Healthcheck: &Healthcheck{Test: []string{"CMD", "true"}, Interval: -1}}, "supervision.healthcheck.interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Record{ID: "x", Supervision: tc.s}.Validate()
			if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want InvalidArgument naming %s", err, tc.want)
			}
		})
	}
	ok := Record{ID: "x", Supervision: Supervision{Restart: RestartPolicy{Name: spec.RestartOnFailure, MaxRetries: 3},
		Healthcheck: &Healthcheck{Test: []string{"CMD-SHELL", "true"}}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Locks down Alive: the pid must exist and have started when recorded,
// so a recycled pid does not pass for the monitor.
func TestAlive(t *testing.T) {
	ticks, _, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self := MonitorProcess{Pid: os.Getpid(), StartTicks: ticks}
	if !Alive(Record{Monitor: self}) {
		t.Error("this process is not alive")
	}
	recycled := self
	recycled.StartTicks++
	if Alive(Record{Monitor: recycled}) {
		t.Error("a pid that started at another time counts as the monitor")
	}
	if Alive(Record{}) {
		t.Error("a record without a monitor is alive")
	}
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(Record{Monitor: MonitorProcess{Pid: gone.Process.Pid, StartTicks: ticks}}) {
		t.Error("an exited process is alive")
	}
}
