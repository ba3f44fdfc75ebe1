package seatbelt

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// vocabularyJSON lists every operation, filter, modifier and bare constant
// the linter accepts. It is data so that widening it is a reviewable diff:
// one unknown symbol makes sandbox-exec reject the whole profile (an
// unvetted TIOCSTI broke Codex on some macOS versions, codex #45119), so
// only names seen working in shipped profiles belong here.
//
//go:embed vocabulary.json
var vocabularyJSON []byte

// Filter argument kinds of vocabulary.json.
const (
	argPath     = "path"     // one string expression naming an absolute, canonical path
	argRegex    = "regex"    // one string expression holding an anchored regex
	argString   = "string"   // one string expression
	argFilters  = "filters"  // one or more nested filters
	argFilter   = "filter"   // exactly one nested filter
	argConstant = "constant" // one bare symbol from the constants list
	argNumber   = "number"   // one decimal number
	argAddress  = "address"  // a protocol symbol and a "host:port" string
)

type vocabulary struct {
	Version     int               `json:"version"`
	Operations  []string          `json:"operations"`
	Filters     map[string]string `json:"filters"`
	Expressions []string          `json:"expressions"`
	Modifiers   map[string]int    `json:"modifiers"`
	Constants   []string          `json:"constants"`
	Protocols   []string          `json:"address_protocols"`

	ops, exprs, consts, protos map[string]bool
}

var vocab = sync.OnceValue(func() *vocabulary { return mustVocabulary(vocabularyJSON) })

func mustVocabulary(data []byte) *vocabulary {
	v, err := decodeVocabulary(data)
	if err != nil {
		// Embedded at build time and decoded by the tests: this only fires
		// on a build from a broken tree.
		panic(fmt.Sprintf("embedded SBPL vocabulary: %v", err))
	}
	return v
}

func decodeVocabulary(data []byte) (*vocabulary, error) {
	var v vocabulary
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v.Version != 1 {
		return nil, fmt.Errorf("unsupported version %d", v.Version)
	}
	known := map[string]bool{argPath: true, argRegex: true, argString: true, argFilters: true,
		argFilter: true, argConstant: true, argNumber: true, argAddress: true}
	for name, k := range v.Filters {
		if !known[k] {
			return nil, fmt.Errorf("filter %s: unknown argument kind %q", name, k)
		}
	}
	v.ops, v.exprs, v.consts, v.protos = set(v.Operations), set(v.Expressions), set(v.Constants), set(v.Protocols)
	return &v, nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}
