//go:build !linux

package fromenv

// linuxOnly is empty off Linux: Open says which backends run here.
var linuxOnly = map[string]opener{}
