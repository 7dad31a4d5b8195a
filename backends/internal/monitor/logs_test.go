package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Locks down capture: each line an entry with its stream and an RFC 3339
// nanosecond time; a last line without newline still captured; Logs
// splitting streams, prefixing timestamps, and honoring Tail and Since.
func TestLogsCaptureStreamsAndTimes(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{}, `echo out1; echo err1 >&2; echo out2; printf partial`)
	r := wait(t, p.dir)
	if r.State.ExitCode != 0 || r.State.Status != StatusExited {
		t.Fatalf("state %+v", r.State)
	}
	entries := readEntries(t, filepath.Join(p.dir, logName))
	streams := map[string]string{}
	for _, e := range entries {
		streams[e.Log] = e.Stream
		if e.Time.IsZero() || time.Since(e.Time) > time.Minute {
			t.Errorf("entry %q has time %v", e.Log, e.Time)
		}
	}
	want := map[string]string{"out1\n": "stdout", "err1\n": "stderr", "out2\n": "stdout", "partial": "stdout"}
	if fmt.Sprint(streams) != fmt.Sprint(want) {
		t.Fatalf("entries %v, want %v", streams, want)
	}
	raw, _ := os.ReadFile(filepath.Join(p.dir, logName))
	if !regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"`).Match(raw) {
		t.Fatalf("no RFC 3339 nanosecond time in %s", raw)
	}

	var out, errs strings.Builder
	if err := Logs(context.Background(), p.dir, LogOptions{Tail: -1, Stdout: &out, Stderr: &errs}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "out1\nout2\npartial" || errs.String() != "err1\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errs.String())
	}
	out.Reset()
	// The partial line is flushed at exit: surely the last entry.
	if err := Logs(context.Background(), p.dir, LogOptions{Tail: 1, Timestamps: true, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z partial$`).MatchString(out.String()) {
		t.Fatalf("tail 1 with timestamps: %q", out.String())
	}
	out.Reset()
	if err := Logs(context.Background(), p.dir, LogOptions{Tail: -1, Since: time.Now().Add(time.Hour), Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("since the future: %q", out.String())
	}
}

// Locks down rotation end to end: a tiny max size leaves container.log
// and exactly one old generation, and Logs reads them in order.
func TestLogsRotatedAtMaxSize(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{LogMaxBytes: 400}},
		`i=1; while [ $i -le 60 ]; do echo line$i; i=$((i+1)); done`)
	wait(t, p.dir)
	names := []string{}
	entries, _ := os.ReadDir(p.dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "container.log") {
			names = append(names, e.Name())
		}
	}
	if fmt.Sprint(names) != "[container.log container.log.1]" {
		t.Fatalf("log files %v", names)
	}
	nums := lineNumbers(t, logText(t, p.dir))
	if len(nums) == 0 || nums[len(nums)-1] != 60 || nums[0] == 1 {
		t.Fatalf("lines %v: want the last ones up to 60, the first rotated away", nums)
	}
	for i := 1; i < len(nums); i++ {
		if nums[i] != nums[i-1]+1 {
			t.Fatalf("lines %v not contiguous across generations", nums)
		}
	}
	var out strings.Builder
	if err := Logs(context.Background(), p.dir, LogOptions{Tail: 3, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "line58\nline59\nline60\n" {
		t.Fatalf("tail 3 = %q", out.String())
	}
}

// Locks down Follow: new lines arrive while the container runs, across
// rotations, and Logs returns once the container has exited for good.
func TestLogsFollowUntilExit(t *testing.T) {
	t.Parallel()
	p := startRun(t, Record{Supervision: Supervision{LogMaxBytes: 2000}},
		`i=1; while [ $i -le 40 ]; do echo line$i; i=$((i+1)); sleep 0.02; done`)
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Logs(ctx, p.dir, LogOptions{Follow: true, Tail: -1, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if r := p.read(t); !r.Final() {
		t.Fatalf("follow ended while the container is %s", r.State.Status)
	}
	nums := lineNumbers(t, out.String())
	if len(nums) == 0 || nums[len(nums)-1] != 40 {
		t.Fatalf("followed lines %v: want up to line40", nums)
	}
	for i := 1; i < len(nums); i++ {
		if nums[i] <= nums[i-1] {
			t.Fatalf("followed lines %v out of order or repeated", nums)
		}
	}
}

func lineNumbers(t *testing.T, text string) []int {
	t.Helper()
	var nums []int
	for _, l := range strings.Fields(text) {
		n, err := strconv.Atoi(strings.TrimPrefix(l, "line"))
		if err != nil {
			t.Fatalf("unexpected output %q", l)
		}
		nums = append(nums, n)
	}
	return nums
}
