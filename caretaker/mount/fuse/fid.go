package fuse

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/p9"
)

// fid is a 9P file this side holds; closed at most once.
type fid struct {
	f      p9.File
	closed atomic.Bool
}

func (x *fid) close() {
	if x != nil && x.closed.CompareAndSwap(false, true) {
		_ = x.f.Close() // a clunk; nothing to do if the export is gone
	}
}

// slot holds a node's current walked fid, or nil when the budget took it
// back (the node walks its name again when next used). A fid is also
// replaced by a fresher one whenever the node is reached by a name again
// (see node.refresh), because the p9 server ties a fid to the name it was
// walked by: once that name is unlinked the fid can no longer be opened,
// even if the inode lives on under another link.
type slot struct {
	p    atomic.Pointer[fid]
	elem *list.Element // in budget.lru; guarded by budget.mu
}

func (s *slot) close() { s.p.Swap(nil).close() }

// budget bounds the walked fids this side holds, least recently used
// first out. Each one pins an open descriptor on the exporting machine,
// and the kernel may keep far more inodes cached than that machine allows
// open files.
type budget struct {
	mu    sync.Mutex
	lru   list.List // of *node, most recently used in front
	max   int
	clunk *clunker
}

// install gives n the fid f, closing the one it replaces, and evicts the
// least recently used fids over the budget. pinned nodes (the root) are
// never evicted.
func (b *budget) install(n *node, f p9.File, pinned bool) {
	b.clunk.later(n.s.p.Swap(&fid{f: f}))
	if pinned {
		return
	}
	var out []*fid
	b.mu.Lock()
	if n.s.elem != nil {
		b.lru.MoveToFront(n.s.elem)
	} else {
		n.s.elem = b.lru.PushFront(n)
	}
	for b.lru.Len() > b.max {
		old := b.lru.Remove(b.lru.Back()).(*node)
		old.s.elem = nil
		out = append(out, old.s.p.Swap(nil))
	}
	b.mu.Unlock()
	for _, x := range out {
		b.clunk.later(x)
	}
}

// touch marks n as just used.
func (b *budget) touch(n *node) {
	b.mu.Lock()
	if n.s.elem != nil {
		b.lru.MoveToFront(n.s.elem)
	}
	b.mu.Unlock()
}

// drop forgets n and closes its fid.
func (b *budget) drop(n *node) {
	b.mu.Lock()
	if n.s.elem != nil {
		b.lru.Remove(n.s.elem)
		n.s.elem = nil
	}
	b.mu.Unlock()
	n.s.close()
}

// clunker closes fids off the request path, until the mount ends.
type clunker struct {
	ch   chan *fid
	done chan struct{}
	once sync.Once
}

func newClunker() *clunker {
	c := &clunker{ch: make(chan *fid, 1024), done: make(chan struct{})}
	go func() {
		for {
			select {
			case x := <-c.ch:
				x.close()
			case <-c.done:
				return // the connection closes: the export drops every fid
			}
		}
	}()
	return c
}

func (c *clunker) later(x *fid) {
	if x == nil {
		return
	}
	select {
	case <-c.done:
		return
	case c.ch <- x:
	default:
		x.close() // backlog full: pay the round trip here
	}
}

func (c *clunker) stop() { c.once.Do(func() { close(c.done) }) }
