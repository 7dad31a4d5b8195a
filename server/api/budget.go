package api

import (
	"fmt"
	"sync/atomic"

	"github.com/containerd/errdefs"
)

// Budget bounds what a peer may send for one purpose (a build's files)
// across streams: Take fails once more than its size was taken.
type Budget struct {
	What string // names it in the error: "a build's files"
	size int64
	left atomic.Int64
}

// NewBudget is a budget of size bytes.
func NewBudget(what string, size int64) *Budget {
	b := &Budget{What: what, size: size}
	b.left.Store(size)
	return b
}

// Take takes n bytes; nil takes nothing from no budget.
func (b *Budget) Take(n int64) error {
	if b == nil {
		return nil
	}
	if b.left.Add(-n) < 0 {
		return fmt.Errorf("%s: more than their bound of %d bytes were sent: %w", b.What, b.size, errdefs.ErrResourceExhausted)
	}
	return nil
}
