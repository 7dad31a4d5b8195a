package monitor

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readEntries(t *testing.T, path string) []logEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// Locks down line splitting: one entry per line with its newline, writes
// joined across calls, an over-long line split at maxLineBytes, and a
// partial last line written by Flush without a newline.
func TestLineWriterSplitsLines(t *testing.T) {
	dir := t.TempDir()
	lf, err := openLogFile(filepath.Join(dir, logName), filepath.Join(dir, rotatedName), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := newLineWriter(StreamStderr, lf)
	long := strings.Repeat("x", maxLineBytes+10)
	for _, s := range []string{"a\nb", "c\n", long + "\n", "<tail> & more"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if err := lf.Close(); err != nil {
		t.Fatal(err)
	}
	got := readEntries(t, filepath.Join(dir, logName))
	want := []string{"a\n", "bc\n", long[:maxLineBytes], long[maxLineBytes:] + "\n", "<tail> & more"}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Log != want[i] || e.Stream != StreamStderr || e.Time.IsZero() {
			t.Errorf("entry %d = %q (%s, %v), want %q", i, e.Log, e.Stream, e.Time, want[i])
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, logName))
	if !strings.Contains(string(raw), "<tail> & more") {
		t.Error("HTML characters escaped in the file")
	}
}

// Locks down rotation: past the max size the file moves to .1, replacing
// the older generation, and every generation stays within the limit.
func TestLogFileRotatesKeepingOneGeneration(t *testing.T) {
	dir := t.TempDir()
	cur, old := filepath.Join(dir, logName), filepath.Join(dir, rotatedName)
	lf, err := openLogFile(cur, old, 300)
	if err != nil {
		t.Fatal(err)
	}
	w := newLineWriter(StreamStdout, lf)
	for i := range 50 {
		if _, err := w.Write([]byte(strings.Repeat("y", i%7) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	lf.Close()
	for _, p := range []string{cur, old} {
		st, err := os.Stat(p)
		if err != nil || st.Size() > 300 || st.Size() == 0 {
			t.Fatalf("%s: %v, size %d", p, err, st.Size())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("%d files, want the log and one old generation", len(entries))
	}
	n := len(readEntries(t, cur)) + len(readEntries(t, old))
	if n >= 50 || n < 4 {
		t.Fatalf("%d entries across two generations of 300 bytes", n)
	}
}
