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
			if err := w.frame(testFrame(msgTlistdir, extTagFirst, nil)); err != nil {
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
	want := [][]byte{testFrame(msgTlistdir, extTagFirst, nil), small, small, big[:headerLen], big[headerLen:]}
	if len(r.writes) != len(want) {
		t.Fatalf("%d writes, want %d", len(r.writes), len(want))
	}
	for i := range want {
		if !bytes.Equal(r.writes[i], want[i]) {
			t.Fatalf("write %d: %d bytes %x..., want %d bytes %x...", i, len(r.writes[i]), r.writes[i][:7], len(want[i]), want[i][:7])
		}
	}
}

func sampleEntries() []Dirent {
	return []Dirent{
		{Name: "d", Offset: 7, Type: 4, Entry: Entry{QID: p9.QID{Type: p9.TypeDir, Version: 3, Path: 1 << 40}, Mask: p9.AttrMask{Mode: true, Size: true, BTime: true},
			Attr: p9.Attr{Mode: p9.ModeDirectory | 0o755, UID: 1000, GID: 100, NLink: 2, Size: 4096, BlockSize: 4096, Blocks: 8,
				ATimeSeconds: 1, ATimeNanoSeconds: 2, MTimeSeconds: 3, MTimeNanoSeconds: 4, CTimeSeconds: 5, CTimeNanoSeconds: 6, BTimeSeconds: 7, BTimeNanoSeconds: 8}}},
		{Name: "gone", Offset: 8, Type: 8, Entry: Entry{Err: linux.ENOENT}},
		{Name: "f", Offset: 1 << 62, Type: 8, Entry: Entry{QID: p9.QID{Path: 9}, Mask: p9.AttrMask{Mode: true, RDev: true}, Attr: p9.Attr{Mode: p9.ModeRegular | 0o600, RDev: 77}}},
	}
}

// pair serves list behind Serve (or a stock p9 server when list is nil)
// on one end of a socket pair, and returns a Client and a p9 client on
// the other.
func pair(t *testing.T, list ListDir) (*Client, *p9.Client) {
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
		if list == nil {
			_ = p9.NewServer(a).Handle(sc, sc)
			return
		}
		x := Serve(sc, list)
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

// Locks down Tlistdir end to end, many at once among 9P requests: each
// caller gets its own answer, attributes intact, and 9P is undisturbed.
func TestListDirAmong9P(t *testing.T) {
	all := sampleEntries()
	x, c := pair(t, func(dir string, offset uint64, max int) (uint64, []Dirent, bool, error) {
		if dir == "gone" {
			return 0, nil, false, linux.ENOTDIR
		}
		from := min(int(offset), len(all))
		to := min(from+max, len(all))
		return uint64(len(dir)), all[from:to], to == len(all), nil
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
				off, max := uint64(i%3), 1+g%3
				path, ents, eof, err := x.ListDir(dir, off, max)
				to := min(int(off)+max, len(all))
				if err == nil && (path != uint64(len(dir)) || eof != (to == len(all)) || !reflect.DeepEqual(ents, all[off:to])) {
					err = fmt.Errorf("ListDir(%s, %d, %d) = %d %v %+v", dir, off, max, path, eof, ents)
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
	if _, _, _, err := x.ListDir("gone", 0, 1); !errors.Is(err, linux.ENOTDIR) {
		t.Fatalf("a directory's own error: %v, want ENOTDIR", err)
	}
	if !x.Speaks() {
		t.Fatal("the export's own error made the client stop asking")
	}
}

// Locks down the fallback: a 9P server that is not a cornus export answers
// Tlistdir with Rlerror; the client says ErrUnsupported from then on, and
// 9P goes on working on the same connection.
func TestListDirUnsupported(t *testing.T) {
	x, c := pair(t, nil)
	if err := readHello(c); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, _, err := x.ListDir("", 0, 10); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("ListDir against a stock 9P server: %v, want ErrUnsupported", err)
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
	x := Serve(sc, func(string, uint64, int) (uint64, []Dirent, bool, error) { return 0, nil, true, nil })
	hdr := testFrame(msgTlistdir, extTagFirst, nil)
	binary.LittleEndian.PutUint32(hdr, maxRequest+1)
	go cc.Write(hdr) //nolint:errcheck // the read below reports the outcome
	if _, err := x.Read(make([]byte, 64)); err == nil {
		t.Fatal("an oversized Tlistdir was read")
	}
}

func FuzzListDirMessages(f *testing.F) {
	f.Add(encodeTlistdir(1, "a/b", 7, 512)[headerLen:])
	f.Add(encodeRlistdir(1, 0, 5, true, sampleEntries())[headerLen:])
	f.Fuzz(func(t *testing.T, body []byte) {
		if dir, off, max, err := decodeTlistdir(body); err == nil {
			d2, o2, m2, err := decodeTlistdir(encodeTlistdir(1, dir, off, max)[headerLen:])
			if err != nil || d2 != dir || o2 != off || m2 != max {
				t.Fatalf("Tlistdir round trip: %v %q %d %d", err, d2, o2, m2)
			}
		}
		if e, path, eof, ents, err := decodeRlistdir(body); err == nil {
			e2, path2, eof2, again, err := decodeRlistdir(encodeRlistdir(1, e, path, eof, ents)[headerLen:])
			if err != nil || e2 != e || path2 != path || eof2 != eof || !reflect.DeepEqual(again, ents) {
				t.Fatalf("Rlistdir round trip: %v", err)
			}
		}
	})
}
