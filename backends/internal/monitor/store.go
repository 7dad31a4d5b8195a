package monitor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/containerd/errdefs"
)

// File names inside a record directory.
const (
	recordName     = "record.json"
	socketName     = "monitor.sock"
	logName        = "container.log"
	rotatedName    = "container.log.1"
	monitorLogName = "monitor.log"
	lockName       = "monitor.lock" // the supervision lock (spawn.go)
)

// Store keeps one directory per container under a root (normally
// <DataDir>/<backend>/records). Writes are atomic, so any number of
// readers may read while the monitor writes; one writer per record at a
// time (the monitor while it lives, the backend otherwise).
type Store struct {
	root string
}

// NewStore returns the store rooted at dir. It does no I/O.
func NewStore(dir string) *Store { return &Store{root: dir} }

// Root is the directory holding one subdirectory per container.
func (s *Store) Root() string { return s.root }

// Dir is the record directory of container id.
func (s *Store) Dir(id string) (string, error) {
	if err := validID(id); err != nil {
		return "", err
	}
	return filepath.Join(s.root, id), nil
}

// Read returns the record of container id; errdefs NotFound if none.
func (s *Store) Read(id string) (Record, error) {
	dir, err := s.Dir(id)
	if err != nil {
		return Record{}, err
	}
	return ReadRecord(dir)
}

// ReadRecord reads the record in a record directory.
func ReadRecord(dir string) (Record, error) {
	path := filepath.Join(dir, recordName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, fmt.Errorf("%w: no container record %s", errdefs.ErrNotFound, path)
	}
	if err != nil {
		return Record{}, fmt.Errorf("read container record: %w", err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("container record %s: %w", path, err)
	}
	if r.Version > RecordVersion {
		return Record{}, fmt.Errorf("%w: container record %s has version %d, newer than this cornus (%d)", errdefs.ErrFailedPrecondition, path, r.Version, RecordVersion)
	}
	return r, nil
}

// Write replaces the record of r.ID atomically: a temporary file in the
// same directory, fsynced, renamed over record.json, then the directory
// fsynced, so a reader sees the old or the new record, never a mix, and
// a crash leaves one of them.
func (s *Store) Write(r Record) error {
	dir, err := s.Dir(r.ID)
	if err != nil {
		return err
	}
	r.Version = RecordVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode container record %s: %w", r.ID, err)
	}
	// 0700: the directory holds the control socket and the output.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("container record %s: %w", r.ID, err)
	}
	if err := writeAtomic(dir, recordName, append(data, '\n')); err != nil {
		return fmt.Errorf("write container record %s: %w", r.ID, err)
	}
	return nil
}

func writeAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// List returns every record, sorted by ID. Directories without a record
// (being created or removed) are skipped; records that cannot be read
// are reported in the error beside the ones that could.
func (s *Store) List() ([]Record, error) {
	entries, err := os.ReadDir(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list container records: %w", err)
	}
	var recs []Record
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || validID(e.Name()) != nil {
			continue
		}
		r, err := ReadRecord(filepath.Join(s.root, e.Name()))
		switch {
		case errdefs.IsNotFound(err):
		case err != nil:
			errs = append(errs, err)
		default:
			recs = append(recs, r)
		}
	}
	return recs, errors.Join(errs...)
}

// Remove deletes the record directory of container id, logs included.
// It refuses (errdefs Conflict) while a monitor supervises the container:
// stop it first. Removing a missing record is not an error.
func (s *Store) Remove(id string) error {
	dir, err := s.Dir(id)
	if err != nil {
		return err
	}
	r, err := ReadRecord(dir)
	if err == nil && AliveIn(dir, r) {
		return fmt.Errorf("%w: container %s: its monitor (pid %d) still runs: stop it first", errdefs.ErrConflict, id, r.Monitor.Pid)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove container record %s: %w", id, err)
	}
	return nil
}
