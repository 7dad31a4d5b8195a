// Package client speaks cornus serve's deploy API: the project verbs the
// CLI uses (the same ones the engine offers locally), images, exec over
// WebSocket, and deploy-attach sessions whose streams reach workloads.
package client
