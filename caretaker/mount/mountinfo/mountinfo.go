// Package mountinfo reads this mount namespace's mount table
// (/proc/self/mountinfo): what cornus mounted where, for unmounting,
// sweeping what a killed process left, and asserting nothing stayed.
// It imports no other cornus package.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Entry is one mount.
type Entry struct {
	Point  string // mountpoint, unescaped
	FSType string // e.g. "fuse.cornus", "9p"
	Source string
	Minor  uint64 // the minor device number (FUSE names its connections by it)
}

// Read lists the mounts of this namespace in mount order (a mount over
// another comes after it).
func Read() ([]Entry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse(f)
}

func parse(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super-options
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+2 >= len(fields) {
			continue
		}
		_, minor, _ := strings.Cut(fields[2], ":")
		n, err := strconv.ParseUint(minor, 10, 32)
		if err != nil {
			continue
		}
		out = append(out, Entry{Point: unescape(fields[4]), FSType: fields[sep+1], Source: unescape(fields[sep+2]), Minor: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	return out, nil
}

// Below lists the mounts of fstype at or below dir, in mount order.
func Below(dir, fstype string) ([]Entry, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	all, err := Read()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, m := range all {
		if m.FSType == fstype && (m.Point == abs || strings.HasPrefix(m.Point, abs+"/")) {
			out = append(out, m)
		}
	}
	return out, nil
}

// Points lists the mountpoints of fstype mounted from source at or below
// dir, in mount order.
func Points(dir, fstype, source string) ([]string, error) {
	mounts, err := Below(dir, fstype)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.Source == source {
			out = append(out, m.Point)
		}
	}
	return out, nil
}

func unescape(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
