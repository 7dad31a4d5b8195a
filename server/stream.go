package server

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
)

// frames writes a streamed answer: NDJSON frames, flushed as they come.
type frames struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	enc *json.Encoder
	rc  *http.ResponseController
}

func newFrames(w http.ResponseWriter) *frames {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	f := &frames{w: w, enc: json.NewEncoder(w), rc: http.NewResponseController(w)}
	_ = f.rc.Flush()
	return f
}

func (f *frames) send(fr api.Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.enc.Encode(fr)
	_ = f.rc.Flush()
}

// Event makes frames a progress.Writer: the engine's events go to the
// client as they happen.
func (f *frames) Event(e progress.Event) { f.send(api.Frame{Progress: &e}) }
func (f *frames) Close()                 {}

func (f *frames) finish(result any, err error) {
	if err != nil {
		e, _ := api.ErrorOf(err)
		f.send(api.Frame{Error: &e})
		return
	}
	f.send(api.Frame{Result: result})
}

// flushWriter writes raw streamed output (logs), flushing every write.
type flushWriter struct {
	mu sync.Mutex
	w  io.Writer
	rc *http.ResponseController
}

func newFlushWriter(w http.ResponseWriter, contentType string) *flushWriter {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return &flushWriter{w: w, rc: rc}
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}
