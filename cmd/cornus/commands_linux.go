package main

import "github.com/spf13/cobra"

// hostCommands are the commands that run cornus's host side: the
// server, the Docker API proxy, the caretaker and the backends' helpers.
// They need Linux (commands_other.go).
func hostCommands(s streams) []*cobra.Command {
	return []*cobra.Command{
		newDaemonCmd(s),
		newMonitorCmd(s),
		newPodmanHealthCmd(s),
		newServeCmd(s),
		newTokenCmd(s),
		newCaretakerCmd(s),
		newAgentCmd(s),
	}
}
