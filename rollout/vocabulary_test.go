package rollout

import "testing"

// The vocabulary and the code name the same things: every line type the
// reader knows is a record term and the other way round; every item type
// with an id prefix is an item term; each term is read or says why not.
func TestVocabularyHoldsToTheCode(t *testing.T) {
	records := map[string]bool{}
	for _, term := range RecordVocabulary {
		records[term.Name] = true
		if !KnownLineType(term.Name) {
			t.Errorf("record %q is in the vocabulary, not in knownLineTypes", term.Name)
		}
	}
	for typ := range knownLineTypes {
		if !records[typ] {
			t.Errorf("line type %q is in knownLineTypes, not in RecordVocabulary", typ)
		}
	}
	for typ := range itemPrefixes {
		if !KnownItemType(typ) {
			t.Errorf("item type %q has an id prefix, not in ItemVocabulary", typ)
		}
	}
	for _, list := range [][]Term{RecordVocabulary, ItemVocabulary, EventVocabulary, FieldVocabulary} {
		seen := map[string]bool{}
		for _, term := range list {
			if (term.ReadBy == "") == (term.Why == "") {
				t.Errorf("%q: want either ReadBy or Why", term.Name)
			}
			if seen[term.Name] {
				t.Errorf("%q listed twice", term.Name)
			}
			seen[term.Name] = true
		}
	}
}

func TestKnown(t *testing.T) {
	terms := []Term{{Name: "compacted.message", ReadBy: "x"}, {Name: "compacted.resume_metadata.*", ReadBy: "x"}}
	for name, want := range map[string]bool{
		"compacted.message": true, "compacted.message.x": false,
		"compacted.resume_metadata": true, "compacted.resume_metadata.model": true, "compacted.resume_metadata[]": true,
		"compacted.resume_metadataX": false, "compacted": false,
	} {
		if _, got := Known(terms, name); got != want {
			t.Errorf("Known(%q) = %v, want %v", name, got, want)
		}
	}
	if KnownItemType("future_item") || !KnownItemType("message") {
		t.Error("KnownItemType")
	}
}
