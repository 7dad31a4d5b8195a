package main

import (
	"os"
	"time"
)

// resizes ticks twice a second: a Windows console sends no signal when
// it is resized, so the size is looked at again (and sent when changed).
func resizes() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	t := time.NewTicker(500 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				select {
				case c <- os.Interrupt: // any value: "look again"
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return c, func() { t.Stop(); close(done) }
}
