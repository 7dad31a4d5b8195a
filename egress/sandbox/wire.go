package sandbox

import "time"

// request is one line the parent writes to the child.
type request struct {
	ID uint64 `json:"id"`
	Op string `json:"op"` // opLoad or opDecide
	// Key names a compiled script: its text and options' digest.
	Key string `json:"key"`

	// load
	Script        string        `json:"script,omitempty"`
	MyIP          string        `json:"myIP,omitempty"`
	Deadline      time.Duration `json:"deadline,omitempty"`
	MaxHeapGrowth uint64        `json:"maxHeapGrowth,omitempty"`

	// decide
	Host    string `json:"host,omitempty"`
	IP      string `json:"ip,omitempty"`
	Port    int    `json:"port,omitempty"`
	Default string `json:"default,omitempty"`
}

const (
	opLoad   = "load"
	opDecide = "decide"
)

// response is the child's answer to request ID. ID 0 is the child's
// greeting, sent once it serves.
type response struct {
	ID  uint64 `json:"id"`
	Err string `json:"err,omitempty"`
	// Unknown: the child holds no script Key (it restarted or evicted
	// it): load it again.
	Unknown bool   `json:"unknown,omitempty"`
	Route   string `json:"route,omitempty"`
	By      string `json:"by,omitempty"`
}
