package client

import "golang.org/x/sys/windows/registry"

// systemProxy reads the current user's Internet Settings (Settings →
// Network → Proxy): the manual proxy and its exceptions, and the PAC
// file's URL.
func systemProxy() systemProxyConfig {
	k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Microsoft\Windows\CurrentVersion\Internet Settings`, registry.QUERY_VALUE)
	if err != nil {
		return systemProxyConfig{}
	}
	defer k.Close()
	enable, _, _ := k.GetIntegerValue("ProxyEnable")
	server, _, _ := k.GetStringValue("ProxyServer")
	override, _, _ := k.GetStringValue("ProxyOverride")
	pac, _, _ := k.GetStringValue("AutoConfigURL")
	return parseWindowsProxy(enable, server, override, pac)
}
