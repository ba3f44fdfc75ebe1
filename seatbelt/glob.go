package seatbelt

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// DefaultSensitiveGlobs are the sensitive-file patterns of the agent
// sandbox (.env, .env.*, *.pem, *.key, *credentials*,
// *secret*, .aws/, .ssh/, .gnupg/) written as doublestar globs. They are
// matched at any depth: the spec means a file name anywhere, and a pattern
// silently anchored to one directory protects nothing below it (srt #432).
var DefaultSensitiveGlobs = []string{
	"**/.env",
	"**/.env.*",
	"**/*.pem",
	"**/*.key",
	"**/*credentials*",
	"**/*secret*",
	"**/.aws/**",
	"**/.ssh/**",
	"**/.gnupg/**",
}

// denyGlob normalises a sensitive glob. A pattern without a leading / is
// position independent ("*.pem" means a .pem file at any depth, as in the
// spec), and a trailing / names a directory and what it holds. The result
// is still a doublestar pattern, so the Linux backend can match exactly
// what this backend denies.
func denyGlob(g string) string {
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "**/") && g != "**" {
		g = "**/" + g
	}
	return g
}

// denyRegex is the regex a deny uses for a sensitive glob: the paths the
// normalised glob matches and everything below them. A deny on a
// directory named "secrets" that left "secrets/db.txt" readable would
// protect nothing. Below-a-match is defined through the ancestors, not by
// appending /** to the glob: doublestar v4.10.4 reports no match for
// "**/*t*/**" on "a/xt", so that form would differ between the backends.
func denyRegex(g string) (string, error) {
	re, err := globRegex(denyGlob(g))
	if err != nil || strings.HasSuffix(re, "(/.*)?$") || re == "^.*$" {
		return re, err
	}
	return strings.TrimSuffix(re, "$") + "(/.*)?$", nil
}

// globRegex translates a doublestar glob into an anchored regex that
// matches exactly the paths doublestar.Match does (the Linux backend's
// matcher), so both backends deny the same files. Literal parts are
// escaped with regexp.QuoteMeta; the output uses only ^ $ . * ? [] [^] ()
// and |, the subset the sandbox's regex engine shares with Go's. Globs the
// translation cannot render exactly are errors, never approximations: a '/'
// or '[' inside a character class, an empty {} alternative, a '/' inside
// {}, a double quote or a control character.
func globRegex(g string) (string, error) {
	if g == "" {
		return "", fmt.Errorf("empty glob")
	}
	if strings.IndexFunc(g, isControl) >= 0 || strings.ContainsRune(g, '"') {
		return "", fmt.Errorf("glob %q: control characters and double quotes are not allowed", g)
	}
	segs := collapseGlobstars(strings.Split(g, "/"))
	var b strings.Builder
	b.WriteByte('^')
	for i, seg := range segs {
		if seg == "**" {
			b.WriteString(globstar(i, len(segs)))
			continue
		}
		if i > 0 && segs[i-1] != "**" {
			b.WriteByte('/')
		}
		s, err := segmentRegex(seg)
		if err != nil {
			return "", fmt.Errorf("glob %q: %v", g, err)
		}
		b.WriteString(s)
	}
	b.WriteByte('$')
	re := b.String()
	if _, err := regexp.Compile(re); err != nil {
		return "", fmt.Errorf("glob %q: %v", g, err)
	}
	return re, nil
}

// collapseGlobstars folds a/**/**/b into a/**/b: consecutive globstars
// match the same paths as one.
func collapseGlobstars(segs []string) []string {
	out := segs[:0:0]
	for _, s := range segs {
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// globstar renders a whole-segment ** at position i of n segments,
// including the separators around it: zero or more directories.
func globstar(i, n int) string {
	switch {
	case n == 1:
		return ".*"
	case i == 0:
		return "(.*/)?"
	case i == n-1:
		return "(/.*)?"
	default:
		return "/(.*/)?"
	}
}

// segmentRegex renders one path segment.
func segmentRegex(seg string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; c {
		case '*':
			for i+1 < len(seg) && seg[i+1] == '*' {
				i++ // ** inside a segment is a plain *
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			end, class, err := classRegex(seg, i)
			if err != nil {
				return "", err
			}
			b.WriteString(class)
			i = end
		case '{':
			end, alt, err := altRegex(seg, i)
			if err != nil {
				return "", err
			}
			b.WriteString(alt)
			i = end
		case '\\':
			if i+1 >= len(seg) {
				return "", fmt.Errorf("trailing backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		}
	}
	return b.String(), nil
}

// classRegex renders the class starting at seg[start] ('['); it returns
// the index of the closing ']'. doublestar's negated class also matches
// '/', and so does [^…].
func classRegex(seg string, start int) (int, string, error) {
	i := start + 1
	neg := i < len(seg) && (seg[i] == '!' || seg[i] == '^')
	if neg {
		i++
	}
	body := i
	for ; i < len(seg) && seg[i] != ']'; i++ {
		if seg[i] == '[' || seg[i] == '\\' || seg[i] == '/' {
			return 0, "", fmt.Errorf("%q inside a character class is not supported", seg[i])
		}
	}
	if i >= len(seg) || i == body {
		return 0, "", fmt.Errorf("unterminated or empty character class")
	}
	if neg {
		return i, "[^" + seg[body:i] + "]", nil
	}
	return i, "[" + seg[body:i] + "]", nil
}

// altRegex renders {a,b,…} starting at seg[start]; it returns the index of
// the closing '}'. Alternatives may nest and hold any segment syntax.
func altRegex(seg string, start int) (int, string, error) {
	depth := 0
	var alts []string
	from := start + 1
	for i := start; i < len(seg); i++ {
		switch seg[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}', ',':
			if seg[i] == '}' {
				depth--
			}
			if depth > 1 || depth == 1 && seg[i] == '}' {
				continue
			}
			if i == from {
				return 0, "", fmt.Errorf("empty {} alternative")
			}
			r, err := segmentRegex(seg[from:i])
			if err != nil {
				return 0, "", err
			}
			alts = append(alts, r)
			from = i + 1
			if depth == 0 {
				return i, "(" + strings.Join(alts, "|") + ")", nil
			}
		}
	}
	return 0, "", fmt.Errorf("unterminated {")
}

// sensitiveRegexes turns the sensitive globs into deduplicated, sorted
// deny regexes, so that the order of the configured list never changes
// the profile.
func sensitiveRegexes(globs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, g := range globs {
		re, err := denyRegex(g)
		if err != nil {
			return nil, err
		}
		if !seen[re] {
			seen[re] = true
			out = append(out, re)
		}
	}
	sort.Strings(out)
	return out, nil
}
