package main

import (
	"fmt"
	"time"
)

// nowFlag is --now: an RFC 3339 time, or the clock when not given.
type nowFlag struct {
	t   time.Time
	set bool
}

func (n *nowFlag) String() string {
	if !n.set {
		return ""
	}
	return n.t.Format(time.RFC3339)
}

func (n *nowFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("want an RFC 3339 time such as 2026-03-10T12:00:00Z")
	}
	n.t, n.set = t, true
	return nil
}

func (n *nowFlag) Type() string { return "time" }

// time is the given time, or the clock.
func (n *nowFlag) time() time.Time {
	if n.set {
		return n.t
	}
	return time.Now()
}
