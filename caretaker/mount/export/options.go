package export

// Options tune an export.
type Options struct {
	// ReadOnly refuses every mutating operation with EROFS, enforced here
	// on the exporting side whatever the mounting side does.
	ReadOnly bool
	// Portable confines with os.Root walks instead of openat2(2) on Linux,
	// as every other system does (for tests and benchmarks of that path;
	// Linux without openat2 uses it anyway).
	Portable bool
}

// maxNodes bounds the files the peer may hold at once, further bounded by
// three quarters of this process's open-file limit where it has one; past
// it walks fail with ENFILE.
const maxNodes = 1 << 17

// createPerm keeps permission and sticky bits: the peer (a container,
// maybe root) may not plant set-id files in the developer's tree.
const createPerm = 0o1777
