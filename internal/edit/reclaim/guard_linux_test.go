//go:build linux

package reclaim_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/bloatgen"
)

// An agent idle between turns keeps its rollout open for append: reclaim
// --write refuses it (naming the process) unless Force, and a repair in
// progress (its lock) refuses it too; nothing is written either way.
func TestReclaimRefusesWritersAndLockedFiles(t *testing.T) {
	dir := t.TempDir()
	paths, err := bloatgen.Write(dir, bloatgen.Options{Turns: 3, SubAgents: 0})
	if err != nil {
		t.Fatal(err)
	}
	o := opts(space.PolicyDuplicateExecOutput)
	plan, _, err := reclaim.PlanFile(paths[0], o)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	f, err := os.OpenFile(paths[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	agent := exec.Command("sleep", "60")
	agent.ExtraFiles = []*os.File{f}
	if err := agent.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	f.Close()
	_, err = reclaim.Prepare(plan, o, true)
	var r *inplace.Refusal
	if !errors.As(err, &r) || r.Kind != inplace.InUse || !strings.Contains(err.Error(), fmt.Sprint(agent.Process.Pid)) {
		t.Errorf("a file open for writing: %v", err)
	}
	agent.Process.Kill()
	agent.Wait()

	g, err := inplace.Lock(paths[0]) // a repair in progress
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reclaim.Prepare(plan, o, true); !errors.As(err, &r) || r.Kind != inplace.Busy {
		t.Errorf("a locked file: %v", err)
	}
	g.Release()
	if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("a refused reclaim changed files:\n%s", names(got))
	}
}
