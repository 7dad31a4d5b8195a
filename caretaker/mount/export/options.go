package export

// Options tune an export.
type Options struct {
	// ReadOnly refuses every mutating operation with EROFS, enforced here
	// on the exporting side whatever the mounting side does.
	ReadOnly bool
}
