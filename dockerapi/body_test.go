package dockerapi

import (
	"archive/tar"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// countingReader yields a JSON object whose one string never ends, up to
// size bytes, counting what the server pulled.
type countingReader struct {
	prefix string
	size   int64
	read   atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n := c.read.Load()
	if n >= c.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.size-n)]
	for i := range p {
		if off := n + int64(i); off < int64(len(c.prefix)) {
			p[i] = c.prefix[off]
		} else {
			p[i] = 'a'
		}
	}
	c.read.Add(int64(len(p)))
	return len(p), nil
}

// TestBodyLimit: a 100 MB JSON body to any JSON endpoint is refused with
// 413 and dockerd's {"message"} naming the limit, and the server stops
// reading near the limit instead of buffering it (hardening issue, item 2:
// RSS went to 1.6 GB).
func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t)
	const size = 100 << 20
	// Socket buffers and the client's and server's bufio let a little more
	// through than the server reads.
	const slack = 4 << 20
	for _, c := range []struct {
		path, prefix string
		limit        int64
		knownLength  bool // Content-Length set: refused before reading
	}{
		{"/v1.47/containers/create", `{"Image":"`, maxCreateBody, false},
		{"/v1.47/containers/create", `{"Image":"`, maxCreateBody, true},
		{"/v1.47/containers/nope-" + ts.label + "/exec", `{"Cmd":["`, maxCreateBody, false},
		{"/v1.47/networks/create", `{"Name":"`, maxSmallBody, false},
		{"/v1.47/networks/nope-" + ts.label + "/connect", `{"Container":"`, maxSmallBody, false},
		{"/v1.47/volumes/create", `{"Name":"`, maxSmallBody, false},
	} {
		t.Run(strings.TrimPrefix(c.path, "/v1.47/"), func(t *testing.T) {
			body := &countingReader{prefix: c.prefix, size: size}
			req, err := http.NewRequest("POST", "http://cornus"+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if c.knownLength {
				req.ContentLength = size
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := ts.client.Do(req)
			if got := body.read.Load(); got > c.limit+slack {
				t.Errorf("the server read %d bytes of the body; limit %d", got, c.limit)
			}
			if err != nil {
				// The server may close before the client sees the answer;
				// the count above still proves it stopped reading.
				t.Logf("request ended with %v after %d bytes", err, body.read.Load())
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			want := "request body too large: cornus reads at most "
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(message(string(b)), want) {
				t.Errorf("got %d %s, want 413 %q...", resp.StatusCode, b, want)
			}
		})
	}
}

// TestArchivePutStreams: PUT /containers/{id}/archive takes a body far over
// any JSON limit, streamed (chunked, generated on the fly) to the backend,
// and the file arrives whole (hardening issue, item 2).
func TestArchivePutStreams(t *testing.T) {
	ts := newTestServer(t)
	id := ts.create(ts.label+"-cp", "")
	const size = 64 << 20
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Name: "big", Mode: 0o644, Size: size, Typeflag: tar.TypeReg})
		if err == nil {
			_, err = io.CopyN(tw, zeros{}, size)
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("PUT", "http://cornus/v1.47/containers/"+id+"/archive?path=/tmp", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT archive: %d %s", resp.StatusCode, b)
	}
	status, body, hdr := ts.do("HEAD", "/v1.47/containers/"+id+"/archive?path=/tmp/big", "")
	if status != http.StatusOK {
		t.Fatalf("HEAD archive: %d %s", status, body)
	}
	raw, err := base64.StdEncoding.DecodeString(hdr.Get(pathStatHeader))
	var st struct{ Size int64 }
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Size != size {
		t.Errorf("copied file stat %s (%v), want size %d", raw, err, size)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
