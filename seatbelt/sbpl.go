package seatbelt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// kind is the type of an SBPL datum.
type kind int

const (
	kList kind = iota
	kSymbol
	kString // "…" with the escapes \\ \" \n \t
	kRegex  // #"…": no escapes, the text is taken verbatim
	kBool   // #t or #f, kept in text
	kNumber // decimal digits, kept in text
)

// node is one datum of the SBPL dialect. The generator builds profiles
// as nodes and the linter reads text back into nodes, so both sides agree
// on one grammar and the printer is the only place that produces text.
type node struct {
	kind  kind
	text  string
	items []node
	line  int
}

// maxString is the longest string literal we emit or accept: sandbox-exec
// refuses longer literals ("Error reading string"), which invalidates the
// whole profile.
const maxString = 1024

// lineWidth is where the printer breaks a rule into one filter per line.
const lineWidth = 100

func sym(s string) node       { return node{kind: kSymbol, text: s} }
func str(s string) node       { return node{kind: kString, text: s} }
func rx(s string) node        { return node{kind: kRegex, text: s} }
func list(items ...node) node { return node{kind: kList, items: items} }

func syms(names ...string) []node {
	out := make([]node, len(names))
	for i, n := range names {
		out[i] = sym(n)
	}
	return out
}

// param is (param "NAME"): a value passed as -DNAME=… so that no
// machine-specific path is ever part of the profile text.
func param(name string) node { return list(sym("param"), str(name)) }

// filter is (NAME ARG…), e.g. (subpath "/usr/lib").
func filter(name string, args ...node) node {
	return list(append([]node{sym(name)}, args...)...)
}

func literal(v node) node { return filter("literal", v) }
func subpath(v node) node { return filter("subpath", v) }
func regex(v node) node   { return filter("regex", v) }

// quote is the one function that turns a Go string into an SBPL string
// literal. A path with `")` in it must never close the literal it sits in
// (Bazel #29427), and Go's %q is wrong for this dialect (it emits \x and \u
// escapes TinyScheme does not read). Control characters are refused rather
// than escaped: no legitimate path or name carries them. raw selects the
// #"…" form used for regexes, which has no escapes at all and therefore
// cannot hold a double quote.
func quote(s string, raw bool) (string, error) {
	if len(s) > maxString {
		return "", fmt.Errorf("string of %d bytes exceeds the %d-byte SBPL limit", len(s), maxString)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("string %q is not valid UTF-8", s)
	}
	if i := strings.IndexFunc(s, isControl); i >= 0 {
		return "", fmt.Errorf("string %q contains a control character", s)
	}
	if raw {
		if strings.ContainsRune(s, '"') {
			return "", fmt.Errorf("regex %q contains a double quote, which a #\"…\" literal cannot hold", s)
		}
		return `#"` + s + `"`, nil
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// flat prints n on one line.
func flat(n node) (string, error) {
	switch n.kind {
	case kString:
		return quote(n.text, false)
	case kRegex:
		return quote(n.text, true)
	case kList:
		parts := make([]string, len(n.items))
		for i, it := range n.items {
			s, err := flat(it)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "(" + strings.Join(parts, " ") + ")", nil
	default:
		return n.text, nil
	}
}

// render prints n, breaking a list that does not fit lineWidth into its
// leading atoms followed by one nested list per line.
func render(n node) (string, error) {
	var b strings.Builder
	err := write(&b, n, 0)
	return b.String(), err
}

func write(b *strings.Builder, n node, indent int) error {
	s, err := flat(n)
	if err != nil {
		return err
	}
	if n.kind != kList || indent+len(s) <= lineWidth {
		b.WriteString(s)
		return nil
	}
	b.WriteByte('(')
	i := 0
	for ; i < len(n.items) && n.items[i].kind != kList; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		a, _ := flat(n.items[i]) // atoms already printed once above
		b.WriteString(a)
	}
	for _, it := range n.items[i:] {
		b.WriteString("\n" + strings.Repeat(" ", indent+2))
		if err := write(b, it, indent+2); err != nil {
			return err
		}
	}
	b.WriteByte(')')
	return nil
}
