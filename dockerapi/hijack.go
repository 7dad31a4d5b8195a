package dockerapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/cornus-dev/cornus/backends"
)

// hijacked is a connection taken over from net/http for a raw stream
// (attach, exec start): stdin from the client, output to it.
type hijacked struct {
	conn net.Conn
	in   io.Reader // what the client sends, including bytes net/http buffered
	out  io.Writer
}

// hijack takes the connection over and answers 101 UPGRADED at once (see
// answer).
func hijack(w http.ResponseWriter, r *http.Request, contentType string) (*hijacked, error) {
	h, err := takeOver(w)
	if err != nil {
		return nil, err
	}
	h.answer(r, contentType)
	return h, nil
}

// takeOver hijacks the connection without answering yet.
func takeOver(w http.ResponseWriter) (*hijacked, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, fmt.Errorf("streaming is not supported on this connection")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, fmt.Errorf("hijack connection: %w", err)
	}
	return &hijacked{conn: conn, in: readerWithBuffered(conn, brw.Reader), out: conn}, nil
}

// answer writes 101 UPGRADED (or 200 to clients that did not ask to
// upgrade, as dockerd does) with the stream's content type.
func (h *hijacked) answer(r *http.Request, contentType string) {
	status := "200 OK"
	extra := ""
	if strings.EqualFold(r.Header.Get("Upgrade"), "tcp") || strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
		status = "101 UPGRADED"
		extra = "Connection: Upgrade\r\nUpgrade: tcp\r\n"
	}
	fmt.Fprintf(h.conn, "HTTP/1.1 %s\r\nContent-Type: %s\r\nApi-Version: %s\r\nServer: %s\r\n%s\r\n", status, contentType, MaxAPIVersion, serverHeader(), extra)
}

// answerError writes an error response on a taken-over connection that
// has not been answered yet.
func (h *hijacked) answerError(err error) {
	body, _ := json.Marshal(map[string]string{"message": classMessage(err)})
	fmt.Fprintf(h.conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nApi-Version: %s\r\n\r\n%s",
		errorStatus(err), http.StatusText(errorStatus(err)), len(body), MaxAPIVersion, body)
}

func readerWithBuffered(conn net.Conn, br *bufio.Reader) io.Reader {
	if n := br.Buffered(); n > 0 {
		buffered, _ := br.Peek(n)
		return io.MultiReader(strings.NewReader(string(buffered)), conn)
	}
	return conn
}

// closeOutput ends the output side: a half-close where the transport
// allows it, so the client sees EOF on its read before the full close.
func (h *hijacked) close() {
	if cw, ok := h.conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = h.conn.Close()
}

// watchClose cancels ctx when the connection breaks. It is used when the
// client sends no stdin. A clean EOF is not a disconnect: clients
// half-close their write side when they have no stdin and keep reading
// output; a client that is really gone shows up as failed writes instead.
func (h *hijacked) watchClose(cancel context.CancelFunc) {
	go func() {
		if _, err := io.Copy(io.Discard, h.in); err != nil {
			cancel()
		}
	}()
}

// ttySessions routes resize requests to live TTY streams by container.
type ttySessions struct {
	mu sync.Mutex
	ch map[string]chan backends.TermSize
}

func newTTYSessions() *ttySessions { return &ttySessions{ch: map[string]chan backends.TermSize{}} }

func (t *ttySessions) open(id string) (<-chan backends.TermSize, func()) {
	c := make(chan backends.TermSize, 1)
	t.mu.Lock()
	t.ch[id] = c
	t.mu.Unlock()
	return c, func() {
		t.mu.Lock()
		if t.ch[id] == c {
			delete(t.ch, id)
		}
		t.mu.Unlock()
	}
}

func (t *ttySessions) resize(id string, size backends.TermSize) {
	t.mu.Lock()
	c := t.ch[id]
	t.mu.Unlock()
	if c == nil {
		return
	}
	select { // keep only the latest size
	case <-c:
	default:
	}
	select {
	case c <- size:
	default:
	}
}
