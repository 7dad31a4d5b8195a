package client

import (
	"context"
	"os/exec"
	"time"
)

// systemProxy reads macOS's effective proxy settings (System Settings →
// Network → Proxies) as scutil prints them.
func systemProxy() systemProxyConfig {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/sbin/scutil", "--proxy").Output()
	if err != nil {
		return systemProxyConfig{}
	}
	return parseScutil(string(out))
}
