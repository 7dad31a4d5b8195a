package dockerapi

import (
	"context"
	"io"
	"net/http"

	"github.com/cornus-dev/cornus/backends"
)

func (s *Server) containerAttach(w http.ResponseWriter, r *http.Request) {
	at, ok := want[backends.Attacher](s, w, backends.FeatureAttach, "attach")
	if !ok {
		return
	}
	q := r.URL.Query()
	d, err := s.container(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	tty := d.Config.TTY
	defer s.attached.add(d.ID)()
	// Take the connection over now, but answer the upgrade only once the
	// backend's stream is live: a client starts the container on seeing
	// the answer, and output produced before the stream exists would be lost.
	h, err := takeOver(w)
	if err != nil {
		writeError(w, err)
		return
	}
	defer h.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := backends.AttachOptions{Logs: boolValue(q.Get("logs")), Stream: boolValue(q.Get("stream"))}
	out, errw := muxWriters(h.out, tty)
	if boolValue(q.Get("stdout")) {
		o.Stdout = out
	}
	if boolValue(q.Get("stderr")) {
		o.Stderr = errw
	}
	if boolValue(q.Get("stdin")) {
		o.Stdin = h.in
	} else {
		h.watchClose(cancel)
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if tty {
		resize, done := s.sessions.open(d.ID)
		defer done()
		o.Resize = resize
	}
	answered := false
	o.Attached = func() {
		answered = true
		h.answer(r, streamType(r, tty))
	}
	if err := at.Attach(ctx, d.ID, o); err != nil && !answered {
		h.answerError(err)
	}
}
