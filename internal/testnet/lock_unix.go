//go:build unix

package testnet

import (
	"os"
	"syscall"
)

// lockFile takes f's exclusive lock without waiting; it goes with f.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
