//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// resizes signals each change of the terminal's size (SIGWINCH).
func resizes() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	return c, func() { signal.Stop(c) }
}
