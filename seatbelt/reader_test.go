package seatbelt

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	forms, err := parse("; head\n(version 1)\n(allow file-read* ; why\n  (regex #\"^/a\\.b$\") (literal \"q\\\"\\\\\\n\\t\") #t #f -12)\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []node{
		list(sym("version"), node{kind: kNumber, text: "1"}),
		list(sym("allow"), sym("file-read*"), regex(rx(`^/a\.b$`)), literal(str("q\"\\\n\t")),
			node{kind: kBool, text: "#t"}, node{kind: kBool, text: "#f"}, node{kind: kNumber, text: "-12"}),
	}
	if got := stripLines(forms); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if forms[1].line != 3 || forms[1].items[2].line != 4 {
		t.Errorf("lines: form %d, regex %d", forms[1].line, forms[1].items[2].line)
	}
}

func TestParseErrors(t *testing.T) {
	for src, line := range map[string]int{
		"(allow":                      1,
		")":                           1,
		"(a \"open":                   1,
		"\n(a \"\\x41\")":             2,
		"(a #\"open":                  1,
		"(a #q)":                      1,
		"(a 'b)":                      1,
		"(a \"x\\":                    1,
		"(a\n\n b é)":                 3,
		strings.Repeat("(", 65) + "a": 1,
	} {
		_, err := parse(src)
		se, ok := err.(*syntaxError)
		if !ok || se.line != line {
			t.Errorf("parse(%q) = %v, want a syntax error on line %d", src, err, line)
		}
	}
}

// TestRenderRoundTrip prints every generated profile's forms and reads
// them back: the printer and the reader agree on the grammar.
func TestRenderRoundTrip(t *testing.T) {
	for _, c := range goldenCases() {
		p := generate(t, c.tier, c.cfg, c.opts)
		checkRoundTrip(t, p.Text)
	}
}

func checkRoundTrip(t *testing.T, src string) {
	t.Helper()
	forms, err := parse(src)
	if err != nil {
		return
	}
	var b strings.Builder
	for _, f := range forms {
		s, err := render(f)
		if err != nil {
			return // control characters and long strings are not printable, by design
		}
		b.WriteString(s + "\n")
	}
	again, err := parse(b.String())
	if err != nil {
		t.Fatalf("reading back %q: %v", b.String(), err)
	}
	if !reflect.DeepEqual(stripLines(forms), stripLines(again)) {
		t.Fatalf("round trip changed the forms of %q:\n%s", src, b.String())
	}
}

func stripLines(ns []node) []node {
	if ns == nil {
		return nil
	}
	out := make([]node, len(ns))
	for i, n := range ns {
		out[i] = node{kind: n.kind, text: n.text, items: stripLines(n.items)}
	}
	return out
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		`/Users/a "b"`:  `"/Users/a \"b\""`,
		`C:\x`:          `"C:\\x` + `"`,
		`/a") (allow x`: `"/a\") (allow x"`,
	} {
		got, err := quote(in, false)
		if err != nil || got != want {
			t.Errorf("quote(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a\nb", "a\x00", "\x7f", strings.Repeat("a", maxString+1), "\xff"} {
		if _, err := quote(bad, false); err == nil {
			t.Errorf("quote(%q) accepted", bad)
		}
	}
	if _, err := quote(`^a"b$`, true); err == nil {
		t.Error("a raw string with a double quote was accepted")
	}
}

// FuzzReader checks that the reader never panics, that Lint never panics
// on what it reads, and that whatever it reads prints and reads back the
// same. The seed corpus is in testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	f.Add(head)
	f.Fuzz(func(t *testing.T, src string) {
		Lint(src, map[string]string{"RUN_TAG": "t"})
		checkRoundTrip(t, src)
	})
}
