package schema

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Every row has a distinct name, a version from 1 and a command.
func TestTable(t *testing.T) {
	seen := map[Name]bool{}
	for _, o := range Outputs() {
		if seen[o.Name] {
			t.Errorf("%s is in the table twice", o.Name)
		}
		seen[o.Name] = true
		if o.Version < 1 || o.Command == "" {
			t.Errorf("%s: version %d, command %q", o.Name, o.Version, o.Command)
		}
		if o.Version > 1 && o.Changes == "" {
			t.Errorf("%s: version %d says not what changed", o.Name, o.Version)
		}
	}
}

func TestHeaderAndFile(t *testing.T) {
	h := NewHeader(Space)
	if h.Schema != Space || h.SchemaVersion != Version(Space) || h.Tool != "rollout" || h.Command != "space" || h.Version == "" {
		t.Errorf("NewHeader(Space) = %+v", h)
	}
	if got, want := File(VerifyReport), "docs/schema/verify-report.v1.json"; got != want {
		t.Errorf("File(VerifyReport) = %q, want %q", got, want)
	}
}

func TestLookupUnknownPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Lookup of an unknown name did not panic")
		}
	}()
	lookup("no-such-output")
}

// Every version bump is in the changelog of docs/schema/README.md, and its
// schema file is published.
func TestBumpsDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/schema/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range Outputs() {
		if _, err := os.Stat("../../../" + File(o.Name)); err != nil {
			t.Errorf("%s: %v", o.Name, err)
		}
		if o.Version > 1 && !strings.Contains(string(readme), fmt.Sprintf("`%s` v%d:", o.Name, o.Version)) {
			t.Errorf("docs/schema/README.md does not say what %s v%d changed", o.Name, o.Version)
		}
	}
}
