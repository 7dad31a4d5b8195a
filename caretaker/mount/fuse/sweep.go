package fuse

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Sweep detaches every cornus FUSE mount at or below dir and aborts its
// connection: what a process that died (kill -9) left mounted, whose
// serving side is gone. It returns the mountpoints it detached.
func Sweep(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mounts, err := cornusMounts()
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	// Deepest first: a mount below another goes before it.
	for i := len(mounts) - 1; i >= 0; i-- {
		m := mounts[i]
		if m.point != abs && !strings.HasPrefix(m.point, abs+"/") {
			continue
		}
		if err := lazyUnmount(m.point); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = abort(m.dev) // best effort: detached already
		done = append(done, m.point)
	}
	return done, errors.Join(errs...)
}

// Mounted lists the cornus FUSE mountpoints at or below dir in this mount
// namespace.
func Mounted(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mounts, err := cornusMounts()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		if m.point == abs || strings.HasPrefix(m.point, abs+"/") {
			out = append(out, m.point)
		}
	}
	return out, nil
}

type mountEntry struct {
	point string
	dev   uint64
}

// cornusMounts lists this namespace's cornus FUSE mounts in mount order.
func cornusMounts() ([]mountEntry, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) || fields[sep+1] != "fuse.cornus" {
			continue
		}
		_, minor, _ := strings.Cut(fields[2], ":")
		dev, err := strconv.ParseUint(minor, 10, 32)
		if err != nil {
			continue
		}
		out = append(out, mountEntry{point: unescapeMountinfo(fields[4]), dev: dev})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	return out, nil
}

func unescapeMountinfo(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
