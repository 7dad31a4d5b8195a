package monitor

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// An attached client's input reaches a container that keeps stdin open,
// its output comes back per stream, and the end of its input ends the
// attachment but not the container's stdin.
func TestAttachStdinAndOutput(t *testing.T) {
	p := startRun(t, Record{Supervision: Supervision{OpenStdin: true}},
		`while read -r line; do echo "out:$line"; echo "err:$line" >&2; done; echo stdin-ended >&2`)
	waitFor(t, 20*time.Second, "running", func() bool { return p.read(t).State.Status == StatusRunning })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb syncBuffer
	in := &slowReader{lines: []string{"one\n", "two\n"}, endWhen: func() bool {
		return strings.Contains(out.String(), "out:two") && strings.Contains(errb.String(), "err:two")
	}}
	attached := false
	err := Attach(ctx, p.dir, AttachStreams{Stdin: in, Stdout: &out, Stderr: &errb, Attached: func() { attached = true }})
	if err != nil || !attached {
		t.Fatalf("attach: %v (attached %v)", err, attached)
	}
	waitFor(t, 10*time.Second, "the lines in the log", func() bool {
		return strings.Contains(logText(t, p.dir), "out:two")
	})
	if s := p.read(t).State.Status; s != StatusRunning {
		t.Fatalf("the end of the client's input ended the container's stdin: %s", s)
	}
	// The output came back while attached, each line on its own stream.
	if out.String() != "out:one\nout:two\n" || errb.String() != "err:one\nerr:two\n" {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// A container without an open stdin cannot be fed, and attaching to one
// that is not running is a conflict.
func TestAttachNotRunning(t *testing.T) {
	p := startRun(t, Record{}, `exit 0`)
	wait(t, p.dir)
	err := Attach(context.Background(), p.dir, AttachStreams{Stdout: &syncBuffer{}})
	if err == nil {
		t.Fatal("attached to an exited container")
	}
}

// slowReader hands out its lines one read at a time, a little apart, as
// a typing user would, and ends (the end of input ends the attachment)
// once endWhen says the output came back, or after 10 s.
type slowReader struct {
	lines   []string
	endWhen func() bool
}

func (r *slowReader) Read(b []byte) (int, error) {
	if len(r.lines) == 0 {
		for deadline := time.Now().Add(10 * time.Second); !r.endWhen() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		return 0, io.EOF
	}
	time.Sleep(50 * time.Millisecond)
	n := copy(b, r.lines[0])
	r.lines = r.lines[1:]
	return n, nil
}
