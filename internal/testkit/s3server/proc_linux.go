package s3server

import (
	"os/exec"
	"syscall"
)

// ownGroup starts weed in a process group of its own, so that killGroup
// reaches every process it starts, and kills it when the test binary dies
// without running its cleanups (a timeout's panic, a kill) instead of
// leaving a server behind.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
