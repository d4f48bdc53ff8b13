package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Golden is one generated case as committed under testdata/VERSION/SCENARIO:
// the rollouts Codex wrote (in session/, unchanged) and this record.
type Golden struct {
	Provenance Provenance `json:"provenance"`
	// ID is the session the scenario started; Judged the rollout the oracle
	// resumed (relative to session/).
	ID     string       `json:"id"`
	Judged string       `json:"judged"`
	Steps  []StepResult `json:"steps"`
	Oracle *Oracle      `json:"oracle"`
}

// Provenance says how a golden was made.
type Provenance struct {
	Version   string   `json:"codex_version"`
	Generated string   `json:"generated"` // date, UTC
	Scenario  Scenario `json:"scenario"`
	Generator string   `json:"generator"`
}

// GoldenDir is where the goldens live, relative to the module root.
const GoldenDir = "internal/testkit/conformance/testdata"

// WriteGolden generates scenario sc with Codex c, resumes what it made in
// a fresh home and writes the case under out/VERSION/SCENARIO (replacing
// what was there). work is a scratch directory.
func WriteGolden(ctx context.Context, c *Codex, sc Scenario, work, out string) (*Golden, error) {
	m := NewMock()
	defer m.Close()
	s, err := Generate(ctx, c, m, sc, filepath.Join(work, "gen"), out)
	if err != nil {
		return nil, err
	}
	g := &Golden{Provenance: Provenance{Version: c.Version, Generated: time.Now().UTC().Format("2006-01-02"),
		Scenario: sc, Generator: "make conformance (internal/testkit/conformance/internal/gen)"},
		ID: s.ID, Judged: s.Judged, Steps: s.Steps}
	for i := range g.Steps {
		g.Steps[i].Changes = rolloutChanges(g.Steps[i].Changes)
	}
	files := map[string][]byte{}
	for _, r := range s.Rollouts {
		b, err := os.ReadFile(filepath.Join(s.Home.Dir, r))
		if err != nil {
			return nil, err
		}
		files[r] = b
	}
	judgedID := SessionID(filepath.Join(s.Home.Dir, s.Judged))
	// The oracle resumes in a fresh home at the generating home's paths.
	if err := os.RemoveAll(filepath.Join(work, "gen")); err != nil {
		return nil, err
	}
	o, err := Resume(ctx, c, m, files, s.Judged, judgedID, filepath.Join(work, "oracle"), sc.Remote)
	if err != nil {
		return nil, err
	}
	g.Oracle = o
	dst := filepath.Join(out, c.Version, sc.Name)
	if err := os.RemoveAll(dst); err != nil {
		return nil, err
	}
	for r, b := range files {
		p := filepath.Join(dst, "session", r)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	return g, writeJSON(filepath.Join(dst, "golden.json"), g)
}

// rolloutChanges keeps the changes to rollouts and Codex's databases (a
// version's other files are noise here).
func rolloutChanges(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if isRolloutName(c.Path) || strings.HasSuffix(c.Path, ".sqlite") || strings.HasPrefix(c.Path, "session_index") {
			out = append(out, c)
		}
	}
	return out
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadGolden reads testdata/VERSION/SCENARIO/golden.json.
func ReadGolden(dir string) (*Golden, error) {
	b, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &g, nil
}
