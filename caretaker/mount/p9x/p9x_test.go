package p9x

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/hugelgupf/p9/fsimpl/localfs"
	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// recorder keeps each write it is given.
type recorder struct{ writes [][]byte }

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func testFrame(typ uint8, tag uint16, body []byte) []byte {
	return done(append(frame(typ, tag), body...))
}

// Locks down whole-frame writes: a frame given in parts (as the p9
// library's send gives it) goes out in one write, a big last part right
// behind its header, and an extension frame sent meanwhile never lands
// between the parts.
func TestWriterSendsWholeFrames(t *testing.T) {
	r := &recorder{}
	w := &writer{w: r}
	small := testFrame(117, 1, []byte("0123456789"))
	for _, part := range [][]byte{small[:3], small[3:7], small[7:9], small[9:]} {
		if _, err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		if part[0] == small[3] {
			if err := w.frame(testFrame(msgTstatdir, extTagFirst, nil)); err != nil {
				t.Fatal(err)
			}
		}
	}
	big := testFrame(117, 2, bytes.Repeat([]byte{7}, 2*bigPart))
	two := append(bytes.Clone(small), big...)
	if _, err := w.Write(two[:len(small)+headerLen]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(two[len(small)+headerLen:]); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{testFrame(msgTstatdir, extTagFirst, nil), small, small, big[:headerLen], big[headerLen:]}
	if len(r.writes) != len(want) {
		t.Fatalf("%d writes, want %d", len(r.writes), len(want))
	}
	for i := range want {
		if !bytes.Equal(r.writes[i], want[i]) {
			t.Fatalf("write %d: %d bytes %x..., want %d bytes %x...", i, len(r.writes[i]), r.writes[i][:7], len(want[i]), want[i][:7])
		}
	}
}

func sampleEntries() []Entry {
	return []Entry{
		{QID: p9.QID{Type: p9.TypeDir, Version: 3, Path: 1 << 40}, Mask: p9.AttrMask{Mode: true, Size: true, BTime: true},
			Attr: p9.Attr{Mode: p9.ModeDirectory | 0o755, UID: 1000, GID: 100, NLink: 2, Size: 4096, BlockSize: 4096, Blocks: 8,
				ATimeSeconds: 1, ATimeNanoSeconds: 2, MTimeSeconds: 3, MTimeNanoSeconds: 4, CTimeSeconds: 5, CTimeNanoSeconds: 6, BTimeSeconds: 7, BTimeNanoSeconds: 8}},
		{Err: linux.ENOENT},
		{QID: p9.QID{Path: 9}, Mask: p9.AttrMask{Mode: true, RDev: true}, Attr: p9.Attr{Mode: p9.ModeRegular | 0o600, RDev: 77}},
	}
}

// pair serves stat behind Serve (or a stock p9 server when stat is nil)
// on one end of a socket pair, and returns a Client and a p9 client on
// the other.
func pair(t *testing.T, stat StatDir) (*Client, *p9.Client) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello"), []byte("world"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := localfs.Attacher(root)
	sc, cc := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		if stat == nil {
			_ = p9.NewServer(a).Handle(sc, sc)
			return
		}
		x := Serve(sc, stat)
		_ = p9.NewServer(a).Handle(x, x)
	}()
	x := NewClient(cc)
	c, err := p9.NewClient(x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); x.Close(); sc.Close(); <-served })
	return x, c
}

// readHello reads the file through p9, proving the 9P stream is
// intact around the extension's frames.
func readHello(c *p9.Client) error {
	root, err := c.Attach("")
	if err != nil {
		return err
	}
	defer root.Close()
	_, f, err := root.Walk([]string{"hello"})
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		return err
	}
	b := make([]byte, 16)
	n, err := f.ReadAt(b, 0)
	if err != nil && n == 0 {
		return err
	}
	if string(b[:n]) != "world" {
		return fmt.Errorf("read %q", b[:n])
	}
	return nil
}

// Locks down Tstatdir end to end, many at once among 9P requests: each
// caller gets its own answer, attributes intact, and 9P is undisturbed.
func TestStatDirAmong9P(t *testing.T) {
	want := sampleEntries()
	x, c := pair(t, func(dir string, names []string) (uint64, []Entry, error) {
		if dir == "gone" {
			return 0, nil, linux.ENOTDIR
		}
		ents := make([]Entry, len(names))
		for i, n := range names {
			var k int
			if _, err := fmt.Sscanf(n, "n%d", &k); err != nil {
				return 0, nil, err
			}
			ents[i] = want[k%len(want)]
		}
		return uint64(len(dir)), ents, nil
	})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				if i%4 == 0 {
					errs <- readHello(c)
					continue
				}
				dir := fmt.Sprintf("d%0*d", g+1, 0)
				names := []string{fmt.Sprintf("n%d", g+i), fmt.Sprintf("n%d", g+i+1)}
				path, ents, err := x.StatDir(dir, names)
				if err == nil && (path != uint64(len(dir)) || !reflect.DeepEqual(ents, []Entry{want[(g+i)%3], want[(g+i+1)%3]})) {
					err = fmt.Errorf("StatDir(%s, %v) = %d %+v", dir, names, path, ents)
				}
				errs <- err
			}
		})
	}
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := x.StatDir("gone", []string{"a"}); !errors.Is(err, linux.ENOTDIR) {
		t.Fatalf("a directory's own error: %v, want ENOTDIR", err)
	}
	if !x.Speaks() {
		t.Fatal("the export's own error made the client stop asking")
	}
}

// Locks down the fallback: a 9P server that is not a cornus export answers
// Tstatdir with Rlerror; the client says ErrUnsupported from then on, and
// 9P goes on working on the same connection.
func TestStatDirUnsupported(t *testing.T) {
	x, c := pair(t, nil)
	if err := readHello(c); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := x.StatDir("", []string{"hello"}); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("StatDir against a stock 9P server: %v, want ErrUnsupported", err)
		}
	}
	if x.Speaks() {
		t.Fatal("Speaks after a refusal")
	}
	if err := readHello(c); err != nil {
		t.Fatalf("9P after the refused extension: %v", err)
	}
}

// Locks down the bounds a peer's frames are held to.
func TestServerRefusesOversizedRequest(t *testing.T) {
	sc, cc := net.Pipe()
	defer cc.Close()
	x := Serve(sc, func(string, []string) (uint64, []Entry, error) { return 0, nil, nil })
	hdr := testFrame(msgTstatdir, extTagFirst, nil)
	binary.LittleEndian.PutUint32(hdr, maxRequest+1)
	go cc.Write(hdr) //nolint:errcheck // the read below reports the outcome
	if _, err := x.Read(make([]byte, 64)); err == nil {
		t.Fatal("an oversized Tstatdir was read")
	}
}

func FuzzStatDirMessages(f *testing.F) {
	f.Add(encodeTstatdir(1, "a/b", []string{"x", "y"})[headerLen:])
	f.Add(encodeRstatdir(1, 0, 5, sampleEntries())[headerLen:])
	f.Fuzz(func(t *testing.T, body []byte) {
		if dir, names, err := decodeTstatdir(body); err == nil {
			if _, again, err := decodeTstatdir(encodeTstatdir(1, dir, names)[headerLen:]); err != nil || !reflect.DeepEqual(again, names) {
				t.Fatalf("Tstatdir round trip: %v %q vs %q", err, again, names)
			}
		}
		if e, path, ents, err := decodeRstatdir(body); err == nil {
			e2, path2, again, err := decodeRstatdir(encodeRstatdir(1, e, path, ents)[headerLen:])
			if err != nil || e2 != e || path2 != path || !reflect.DeepEqual(again, ents) {
				t.Fatalf("Rstatdir round trip: %v", err)
			}
		}
	})
}
