package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/testkit/conformance"
)

// TestLiveInvalidUTF8 measures what Codex does with a byte that is not
// UTF-8 inside one record of a thread it keeps a projection of (issue 35
// point 6), with the projection kept and with it dropped: whether it
// resumes, and whether the damaged record reaches the model. verify's
// message of line/invalid-utf8 must say what happened.
func TestLiveInvalidUTF8(t *testing.T) {
	c := liveCodex(t)
	for _, tc := range []struct {
		name         string
		damage, drop bool
	}{{"undamaged", false, false}, {"projection kept", true, false}, {"projection dropped", true, true}} {
		name, drop := tc.name, tc.drop
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			m := conformance.NewMock()
			defer m.Close()
			h, err := conformance.NewHome(t.TempDir(), c, m)
			if err != nil {
				t.Fatal(err)
			}
			mustCodex(t)(h.Exec(ctx, conformance.Marker+" msg"))
			files := h.Rollouts()
			path := filepath.Join(h.Dir, files[0])
			id := conformance.SessionID(path)
			if p, _ := home.New(h.Dir).ProjectionOf(id); p == nil {
				t.Skipf("Codex %s keeps no projection of this thread", c.Version)
			}
			answer := damageAnswer(t, path, tc.damage)
			if drop {
				if _, err := home.New(h.Dir).DeleteProjection(id); err != nil {
					t.Fatal(err)
				}
			}
			code, out, _ := runRollout("verify", "--select", "line/invalid-utf8", path)
			r, err := h.Resume(ctx, id, conformance.Marker+" msg")
			if err != nil {
				t.Fatal(err)
			}
			sent := false
			if reqs := r.Responses(); len(reqs) > 0 {
				input := gjson.GetBytes(reqs[0].Body, "input").Raw
				if !strings.Contains(input, conformance.Marker+" msg") {
					t.Fatalf("the resume's request holds no earlier prompt: %.300s", input)
				}
				for _, it := range gjson.Parse(input).Array() {
					if it.Get("role").String() == "assistant" && strings.HasPrefix(it.Get("content.0.text").String(), answer) {
						sent = true
					}
				}
			}
			t.Logf("Codex %s, %s: exit %d, the damaged answer sent: %v; verify (exit %d): %s", c.Version, name, r.ExitCode, sent, code, strings.TrimSpace(out))
			switch {
			case !tc.damage:
				if r.ExitCode != 0 || !sent {
					t.Errorf("the undamaged thread: exit %d, its answer sent: %v", r.ExitCode, sent)
				}
			case r.ExitCode != 0:
				if !strings.Contains(out, "refuses to resume") {
					t.Errorf("Codex refused the file, verify says: %s", out)
				}
			case !sent:
				if !strings.Contains(out, "silently drops this record") {
					t.Errorf("Codex resumed without the record, verify says: %s", out)
				}
			default:
				t.Errorf("Codex sent the damaged record: verify's message says it refuses or drops it: %s", out)
			}
		})
	}
}

// damageAnswer puts a 0xff byte into the rollout's only assistant message
// (when damage) and returns the text's start.
func damageAnswer(t *testing.T, path string, damage bool) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if gjson.Get(l, "payload.type").String() != "message" || gjson.Get(l, "payload.role").String() != "assistant" {
			continue
		}
		text := gjson.Get(l, "payload.content.0.text").String()
		if len(text) < 4 {
			continue
		}
		if !damage {
			return text[:4]
		}
		lines[i] = strings.Replace(l, `"text":"`+text[:4], `"text":"`+text[:4]+"\xff", 1)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, o := range lines[:i] {
			if gjson.Get(o, "payload.role").String() == "assistant" {
				t.Fatal("want the rollout's only assistant message")
			}
		}
		return text[:4]
	}
	t.Fatal("no assistant message to damage")
	return ""
}
