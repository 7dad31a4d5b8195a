// Package sys abstracts operating system features for p9.
package internal
