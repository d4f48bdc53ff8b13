//go:build unix

package budget

import (
	"math"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user + system CPU time: unlike wall time it
// does not count the time other processes hold the CPU.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The simulation is linear in the requests: 16 times the requests may
// take about 16 times as long, far from the 256 of a quadratic model.
func TestSimulateLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	perRun := func(n int) float64 {
		ev := synthetic(7, n, 25000)
		ev.Handoffs = []Handoff{{ID: "h", Tokens: 70000, TargetTurn: 0}} // waits at every turn
		s := settingsFor(64000, 258400)
		s.HandoffTokens = 70000
		s.ReminderEvery = 1000
		// Per call, over at least 100ms of CPU (the kernel may account
		// CPU time in ticks); best of 3.
		best := math.Inf(1)
		for range 3 {
			start, calls := cpuTime(t), 0
			for cpuTime(t)-start < 100*time.Millisecond {
				Simulate(ev, s)
				calls++
			}
			best = min(best, float64(cpuTime(t)-start)/float64(calls))
		}
		return best
	}
	small, large := perRun(20000), perRun(320000)
	if ratio := large / small; ratio > 64 {
		t.Errorf("16x the requests took %.0fx the CPU time (%.0f ns vs %.0f ns): not linear", ratio, large, small)
	} else {
		t.Logf("16x the requests: %.1fx the CPU time", ratio)
	}
}
