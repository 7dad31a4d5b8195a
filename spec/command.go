package spec

// Command is an argv. A nil Command keeps the image's default; an empty,
// non-nil one clears it (Compose's `entrypoint: []`).
type Command []string

// IsZero reports whether the command is unset (nil), so that an explicitly
// empty command survives omitempty/omitzero marshalling.
func (c Command) IsZero() bool { return c == nil }
