package seatbelt

import (
	"fmt"
	"strings"
)

// maxDepth bounds list nesting: real profiles nest a handful of levels, and
// a bound keeps hostile input from exhausting the stack.
const maxDepth = 64

// syntaxError is a reader failure at a line of the input.
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// parse reads the SBPL dialect the generator emits and the notes describe:
// `;` comments, "…" strings with the escapes \\ \" \n \t, #"…" raw strings,
// #t and #f, decimal numbers, symbols and nested lists. Anything else (other
// escapes, quote forms, vectors) is an error rather than a guess, because
// the linter must never accept text that TinyScheme reads differently.
func parse(src string) ([]node, error) {
	r := &reader{src: src, line: 1}
	var out []node
	for {
		r.skip()
		if r.pos >= len(r.src) {
			return out, nil
		}
		n, err := r.datum()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
}

type reader struct {
	src   string
	pos   int
	line  int
	depth int
}

func (r *reader) errf(format string, args ...any) error {
	return &syntaxError{line: r.line, msg: fmt.Sprintf(format, args...)}
}

// skip passes whitespace and comments.
func (r *reader) skip() {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == '\n':
			r.line++
			r.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			r.pos++
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.pos++
			}
		default:
			return
		}
	}
}

func (r *reader) datum() (node, error) {
	switch c := r.src[r.pos]; {
	case c == '(':
		return r.list()
	case c == ')':
		return node{}, r.errf("unexpected )")
	case c == '"':
		r.pos++
		return r.str()
	case c == '#':
		return r.hash()
	case isSymbolByte(c):
		return r.atom(), nil
	default:
		return node{}, r.errf("unexpected character %q", c)
	}
}

func (r *reader) list() (node, error) {
	if r.depth >= maxDepth {
		return node{}, r.errf("lists nested deeper than %d", maxDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	n := node{kind: kList, line: r.line}
	r.pos++
	for {
		r.skip()
		if r.pos >= len(r.src) {
			return node{}, r.errf("list opened on line %d is not closed", n.line)
		}
		if r.src[r.pos] == ')' {
			r.pos++
			return n, nil
		}
		it, err := r.datum()
		if err != nil {
			return node{}, err
		}
		n.items = append(n.items, it)
	}
}

var escapes = map[byte]byte{'\\': '\\', '"': '"', 'n': '\n', 't': '\t'}

// str reads the rest of a "…" string; the opening quote is consumed.
func (r *reader) str() (node, error) {
	n := node{kind: kString, line: r.line}
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		r.pos++
		switch c {
		case '"':
			n.text = b.String()
			return n, nil
		case '\\':
			if r.pos >= len(r.src) {
				return node{}, r.errf("string ends in a backslash")
			}
			e, ok := escapes[r.src[r.pos]]
			if !ok {
				return node{}, r.errf("unknown string escape \\%c", r.src[r.pos])
			}
			b.WriteByte(e)
			r.pos++
		case '\n':
			r.line++
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return node{}, r.errf("string opened on line %d is not closed", n.line)
}

// hash reads #"…", #t or #f.
func (r *reader) hash() (node, error) {
	rest := r.src[r.pos:]
	switch {
	case strings.HasPrefix(rest, `#"`):
		n := node{kind: kRegex, line: r.line}
		end := strings.IndexByte(rest[2:], '"')
		if end < 0 {
			return node{}, r.errf("raw string is not closed")
		}
		n.text = rest[2 : 2+end]
		r.line += strings.Count(n.text, "\n")
		r.pos += 2 + end + 1
		return n, nil
	case (strings.HasPrefix(rest, "#t") || strings.HasPrefix(rest, "#f")) && (len(rest) == 2 || isDelimiter(rest[2])):
		r.pos += 2
		return node{kind: kBool, text: rest[:2], line: r.line}, nil
	}
	return node{}, r.errf("unknown # syntax")
}

// atom reads a symbol or a number.
func (r *reader) atom() node {
	start := r.pos
	for r.pos < len(r.src) && isSymbolByte(r.src[r.pos]) {
		r.pos++
	}
	text := r.src[start:r.pos]
	if isNumber(text) {
		return node{kind: kNumber, text: text, line: r.line}
	}
	return node{kind: kSymbol, text: text, line: r.line}
}

func isNumber(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

func isSymbolByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-*_.!?+/<>=:@$%&~^", c) >= 0
}

func isDelimiter(c byte) bool {
	return strings.IndexByte(" \t\r\n\f();\"", c) >= 0
}
