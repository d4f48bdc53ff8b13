//go:build !linux

package s3server

import "os/exec"

// ownGroup and killGroup are the Linux ones' fallback: weed is one
// process, killed alone.
func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
