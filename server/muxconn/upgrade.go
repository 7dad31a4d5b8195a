package muxconn

import (
	"context"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6455's accept key, not a security digest
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// HeaderStream is the header by which a client offers, and a server
// agrees, to carry the stream without WebSocket frames.
const HeaderStream = "X-Cornus-Stream"

// raw is HeaderStream's value for a stream without frames.
const raw = "raw"

// wsGUID is RFC 6455's key suffix for Sec-WebSocket-Accept.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + wsGUID)) //nolint:gosec // see import
	return base64.StdEncoding.EncodeToString(h[:])
}

// Accept answers the upgrade of r: without frames when the client offers
// it, else as a WebSocket. ctx bounds a WebSocket's life. On error the
// answer has been written.
func Accept(ctx context.Context, w http.ResponseWriter, r *http.Request) (*Conn, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if r.Header.Get(HeaderStream) != raw || key == "" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return nil, err
		}
		return WebSocket(ctx, ws), nil
	}
	h := w.Header()
	h.Set("Upgrade", "websocket")
	h.Set("Connection", "Upgrade")
	h.Set("Sec-WebSocket-Accept", acceptKey(key))
	h.Set(HeaderStream, raw)
	rc := http.NewResponseController(w)
	// The 101 goes out with the hijack (net/http flushes a written header
	// then), as websocket.Accept does it.
	w.WriteHeader(http.StatusSwitchingProtocols)
	conn, brw, err := rc.Hijack()
	if err != nil {
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	_ = conn.SetDeadline(time.Time{}) // the server's read and write timeouts were the handshake's
	if err := brw.Flush(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	// Reads go through brw's reader, which may hold the first bytes.
	return Raw(brw.Reader, conn, conn), nil
}

// Dial upgrades a GET of url (http or https) with client and header,
// without frames when the server agrees, else as a WebSocket. ctx bounds
// the dial only. A refusal is returned as the response, its body
// readable, with a nil Conn and error.
func Dial(ctx context.Context, client *http.Client, url string, header http.Header) (*Conn, *http.Response, error) {
	c, resp, err := dialRaw(ctx, client, url, header)
	if c != nil || err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return c, resp, err
	}
	// A server that spoke WebSocket: once more, as a WebSocket client.
	ws, resp, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1), &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: header, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, resp, nil
		}
		return nil, nil, err
	}
	return WebSocket(context.Background(), ws), resp, nil
}

// dialRaw makes the WebSocket handshake offering HeaderStream: raw. It
// returns a Conn when the server agreed; the response alone when it
// refused (or spoke WebSocket: a 101 whose body is closed).
func dialRaw(ctx context.Context, client *http.Client, url string, header http.Header) (*Conn, *http.Response, error) {
	if client.Timeout > 0 { // it would bound the connection's whole life: it bounds the handshake
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, client.Timeout)
		defer cancel()
		c := *client
		c.Timeout = 0
		client = &c
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	key := base64.StdEncoding.EncodeToString(nonce)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	req.Header.Set(HeaderStream, raw)
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, resp, nil
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok || resp.Header.Get(HeaderStream) != raw {
		resp.Body.Close()
		return nil, resp, nil
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(key) {
		rwc.Close()
		return nil, nil, errors.New("upgrade: the server's Sec-WebSocket-Accept does not match the key")
	}
	// The dial's context must not end the connection: net/http ties a
	// 101's body to the request only until the response is read.
	return Raw(rwc, rwc, rwc), resp, nil
}
