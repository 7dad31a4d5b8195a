//go:build !linux

package monitor

func watchDir(string, watchFor) *dirWatch { return pollOnly() }
