//go:build !darwin && !windows

package client

// systemProxy: here the environment is the system's proxy configuration.
func systemProxy() systemProxyConfig { return systemProxyConfig{} }
