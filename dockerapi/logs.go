package dockerapi

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cornus-dev/cornus/backends"
)

// streamType is the Content-Type of attach/logs/exec output: raw for TTY
// containers, multiplexed (stdcopy frames) otherwise; API < 1.42 calls both
// raw-stream.
func streamType(r *http.Request, tty bool) string {
	if tty || !atLeast(r, "1.42") {
		return "application/vnd.docker.raw-stream"
	}
	return "application/vnd.docker.multiplexed-stream"
}

// muxWriters returns where a container's stdout and stderr go on the wire:
// stdcopy frames unless the container has a TTY.
func muxWriters(w io.Writer, tty bool) (io.Writer, io.Writer) {
	if tty {
		return w, w
	}
	var mu sync.Mutex
	return frameWriter{mu: &mu, w: w, stream: streamStdout}, frameWriter{mu: &mu, w: w, stream: streamStderr}
}

func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	wantOut, wantErr := boolValue(q.Get("stdout")), boolValue(q.Get("stderr"))
	if !wantOut && !wantErr {
		writeError(w, invalidParam("Bad parameters: you must choose at least one stream"))
		return
	}
	o := backends.LogOptions{Follow: boolValue(q.Get("follow")), Timestamps: boolValue(q.Get("timestamps")), Tail: -1}
	if t := q.Get("tail"); t != "" && t != "all" {
		n, err := strconv.Atoi(t)
		if err != nil {
			writeError(w, invalidParam("invalid tail %q", t))
			return
		}
		o.Tail = n
	}
	for _, p := range []struct {
		name string
		into *time.Time
	}{{"since", &o.Since}, {"until", &o.Until}} {
		if v := q.Get(p.name); v != "" && v != "0" {
			t, err := unixTime(v)
			if err != nil {
				writeError(w, invalidParam("invalid %s %q", p.name, v))
				return
			}
			*p.into = t
		}
	}
	tty := d.Config.TTY
	w.Header().Set("Content-Type", streamType(r, tty))
	w.WriteHeader(http.StatusOK)
	flush(w)
	out, errw := muxWriters(flushWriter{w}, tty)
	if !wantOut {
		out = io.Discard
	}
	if !wantErr {
		errw = io.Discard
	}
	o.Stdout, o.Stderr = out, errw
	_ = s.b.Logs(r.Context(), d.ID, o) // headers are out: a late error can only end the stream
}

// unixTime parses Docker's "seconds[.nanoseconds]" timestamps.
func unixTime(v string) (time.Time, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return time.Time{}, err
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), nil
}
