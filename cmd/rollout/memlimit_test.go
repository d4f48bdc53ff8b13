package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The soft limit is set unless GOMEMLIMIT says otherwise.
func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	setMemoryLimit("1GiB")
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
	setMemoryLimit("")
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Errorf("limit %d, want %d", got, softMemoryLimit)
	}
}
