package seatbelt

import (
	"fmt"
	"strings"
	"testing"
)

// head is the smallest profile Lint accepts; cases append rules to it.
const head = `(version 1)
(deny default (with message (param "RUN_TAG")))
(allow file-read* (literal "/"))
`

var tagParam = map[string]string{"RUN_TAG": "sbxrun-test"}

func codes(fs []Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return out
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

func TestLintAcceptsMinimalProfile(t *testing.T) {
	if f := Lint(head, tagParam); len(f) > 0 {
		t.Fatalf("findings for the minimal profile: %v", f)
	}
}

type lintCase struct {
	name   string
	text   string
	params map[string]string // nil: tagParam
	want   string            // a finding code, or "" for none
}

func runLintCases(t *testing.T, cases []lintCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			params := c.params
			if params == nil {
				params = tagParam
			}
			f := Lint(c.text, params)
			switch {
			case c.want == "" && len(f) > 0:
				t.Fatalf("want no finding, got %v", f)
			case c.want != "" && !hasCode(f, c.want):
				t.Fatalf("want %s, got %v", c.want, f)
			}
		})
	}
}

// TestLintPitfalls feeds Lint each known-bad pattern of the notes' pitfall
// list, each next to the correct form it must accept. Pitfalls 9 (nested
// sandboxing) and 11 (probing) concern running, not text: run_test.go
// covers them.
func TestLintPitfalls(t *testing.T) {
	runLintCases(t, []lintCase{
		{"1 /tmp is a symlink: a subpath under it never matches", head + `(allow file-write* (subpath "/tmp/run"))`, nil, CodePath},
		{"1 /var through a parameter", head + `(allow file-write* (subpath (param "D")))`, map[string]string{"RUN_TAG": "t", "D": "/var/folders/x"}, CodePath},
		{"1 /etc as a subpath", head + `(allow file-read* (subpath "/etc"))`, nil, CodePath},
		{"1 ok: the resolved /private path", head + `(allow file-write* (subpath "/private/tmp/run"))`, nil, ""},
		{"1 ok: stat of the symlink itself", head + `(allow file-read-metadata (literal "/tmp"))`, nil, ""},
		{"2 ~ is not expanded by SBPL", head + `(allow file-read* (subpath "~/proj"))`, nil, CodePath},
		{"2 relative path", head + `(allow file-read* (subpath "proj/src"))`, nil, CodePath},
		{"2 unclean path", head + `(allow file-read* (subpath "/Users/x/../y"))`, nil, CodePath},
		{"3 injection: a spliced path closes the filter and opens (allow default)",
			head + naiveSplice(`/Users/x/a"))(allow default)(allow file-read* (literal "/b`), nil, CodeAllowDefault},
		{"3 injection: a spliced path adds a second default rule",
			head + `(allow file-read* (subpath "/Users/x/a"))(deny default)(allow file-read* (literal "/b"))`, nil, CodeDefault},
		{"3 Go %q escapes are not SBPL", head + fmt.Sprintf(`(allow file-read* (subpath %q))`, "/Users/x/caf\u00e9\x01"), nil, CodeSyntax},
		{"3 a newline inside a string", head + "(allow file-read* (subpath \"/Users/x\\nb\"))", nil, CodeControlChar},
		{"3 a control character in a parameter", head + `(allow file-read* (subpath (param "P")))`, map[string]string{"RUN_TAG": "t", "P": "/Users/x\x1b"}, CodeControlChar},
		{"4 unanchored regex", head + `(deny file-read* file-write* (regex #"\.env$"))`, nil, CodeRegex},
		{"4 regex that does not compile", head + `(deny file-read* file-write* (regex #"^/a/(b"))`, nil, CodeRegex},
		{"4 Perl class, not portable", head + `(deny file-read* file-write* (regex #"^/dev/ttys\d+$"))`, nil, CodeRegex},
		{"4 single backslash in a plain string", head + `(deny file-read* file-write* (regex "^/a/\.env$"))`, nil, CodeSyntax},
		{"4 ok: raw, anchored, escaped", head + `(deny file-read* file-write* (regex #"^(.*/)?\.env$"))`, nil, ""},
		{"5 (local ip) on outbound allows all egress", head + `(allow network-outbound (local ip "localhost:*"))`, nil, CodeLocalOutbound},
		{"5 (local …) nested in require-any on outbound", head + `(allow network* (require-any (local tcp "*:*")))`, nil, CodeLocalOutbound},
		{"5 a hostname is not an address", head + `(allow network-outbound (remote ip "example.com:443"))`, nil, CodeNetworkAddress},
		{"5 an IP address is not an address either", head + `(allow network-outbound (remote ip "127.0.0.1:8080"))`, nil, CodeNetworkAddress},
		{"5 port out of range", head + `(allow network-outbound (remote tcp "localhost:70000"))`, nil, CodeNetworkAddress},
		{"5 ok: remote localhost port", head + `(allow network-outbound (remote ip "localhost:8080"))`, nil, ""},
		{"5 ok: local on bind", head + `(allow network-bind network-inbound (local ip "localhost:*"))`, nil, ""},
		{"6 read deny without unlink deny: mv then read", head + `(deny file-read* (subpath "/Users/x/.ssh") (with message (param "RUN_TAG")))`, nil, CodeRenameBypass},
		{"6 ok: unlink denied in a rule of its own",
			head + `(deny file-read* (subpath "/Users/x/.ssh"))` + "\n" + `(deny file-write-unlink (subpath "/Users/x/.ssh"))`, nil, ""},
		{"7 deny default without re-allowing /", "(version 1)\n(deny default)\n(allow process-fork)\n", nil, CodeRootLiteral},
		{"7 a broad deny after the re-allow", head + `(deny file-read* file-write* (subpath "/"))`, nil, CodeRootLiteral},
		{"7 a regex deny that matches /", head + `(deny file-read* file-write* (regex #"^/.*"))`, nil, CodeRootLiteral},
		{"7 ok: broad deny, then / again", head + `(deny file-read* file-write* (subpath "/"))` + "\n" + `(allow file-read* (literal "/"))`, nil, ""},
		{"7 allowing (subpath \"/\") allows everything", head + `(allow file-read* (subpath "/"))`, nil, CodeRootSubpath},
		{"8 an unvetted constant", head + `(deny file-ioctl (ioctl-command TIOCSTI))`, nil, CodeUnknownConstant},
		{"8 an unknown operation", head + `(allow file-read-everything)`, nil, CodeUnknownOp},
		{"8 an unknown filter", head + `(allow file-read* (path-ancestors "/Users/x"))`, nil, CodeUnknownFilter},
		{"8 ok: a vetted constant", head + `(allow file-write-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))`, nil, ""},
		{"10 too many path filters", head + manyLiterals(maxPathFilters+1), nil, CodeSize},
		{"10 ok: at the limit", head + manyLiterals(maxPathFilters-1), nil, ""},
	})
}

// naiveSplice is the bug of Bazel #29427: a path pasted into SBPL text.
func naiveSplice(path string) string {
	return fmt.Sprintf(`(allow file-read* (subpath "%s"))`, path)
}

func manyLiterals(n int) string {
	var b strings.Builder
	b.WriteString("(allow file-read*")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\n  (literal \"/Users/x/f%d\")", i)
	}
	return b.String() + ")"
}

// TestLintShape covers the profile-level rules that are not in the
// pitfall list: version, default rule, forbidden forms and modifiers,
// parameters, string length.
func TestLintShape(t *testing.T) {
	runLintCases(t, []lintCase{
		{"version missing", `(deny default) (allow file-read* (literal "/"))`, map[string]string{}, CodeVersion},
		{"version not first", `(deny default) (version 1) (allow file-read* (literal "/"))`, map[string]string{}, CodeVersion},
		{"version twice", head + `(version 1)`, nil, CodeVersion},
		{"version 2", `(version 2) (deny default) (allow file-read* (literal "/"))`, map[string]string{}, CodeVersion},
		{"no default rule", "(version 1)\n(allow file-read* (literal \"/\"))\n", map[string]string{}, CodeDefault},
		{"allow default", "(version 1)\n(allow default)\n", map[string]string{}, CodeAllowDefault},
		{"import", head + `(import "system.sb")`, nil, CodeImport},
		{"with no-sandbox", head + `(allow process-exec (with no-sandbox))`, nil, CodeNoSandbox},
		{"unknown modifier", head + `(allow process-exec (with telemetry))`, nil, CodeUnknownModifier},
		{"message without a value", head + `(deny process-exec (with message))`, nil, CodeBadArgument},
		{"unknown top-level form", head + `(define (home p) p)`, nil, CodeUnknownForm},
		{"a bare symbol as a filter argument", head + `(allow file-read* (subpath HOME))`, nil, CodeBadArgument},
		{"param without -D", head + `(allow file-read* (subpath (param "PROJECT_ROOT")))`, nil, CodeParamUndefined},
		{"-D without param", head, map[string]string{"RUN_TAG": "t", "EXTRA": "/x"}, CodeParamUnused},
		{"computed param name", head + `(allow file-read* (subpath (param (string-append "A" "B"))))`, nil, CodeBadArgument},
		{"string too long", head + `(allow file-read* (literal "/` + strings.Repeat("a", maxString) + `"))`, nil, CodeStringLength},
		{"parameter too long", head + `(allow file-read* (subpath (param "P")))`, map[string]string{"RUN_TAG": "t", "P": "/" + strings.Repeat("a", maxString)}, CodeStringLength},
		{"expression where a filter belongs", head + `(allow file-read* (param "X"))`, map[string]string{"RUN_TAG": "t", "X": "/x"}, CodeBadArgument},
		{"ok: string-append of a param", head + `(allow file-read* (subpath (string-append (param "H") "/proj")))`, map[string]string{"RUN_TAG": "t", "H": "/Users/x"}, ""},
		{"ok: regex built with regex-quote", head + `(allow file-read* (regex (string-append "^" (regex-quote (param "H")) "/x$")))`, map[string]string{"RUN_TAG": "t", "H": "/Users/a.b"}, ""},
	})
}

func TestLintReportsLines(t *testing.T) {
	f := Lint(head+"\n; comment\n(allow file-read* (subpath \"rel\"))\n", tagParam)
	if len(f) != 1 || f[0].Code != CodePath || f[0].Line != 6 {
		t.Fatalf("want one path finding on line 6, got %v", f)
	}
	if s := f[0].String(); !strings.HasPrefix(s, "line 6: path: ") {
		t.Errorf("String() = %q", s)
	}
}

func TestVocabularyDecodes(t *testing.T) {
	v, err := decodeVocabulary(vocabularyJSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"file-read*", "file-write-unlink", "file-map-executable", "process-exec", "process-fork",
		"process-info*", "signal", "sysctl-read", "mach-lookup", "ipc-posix-shm*", "network-outbound", "network-inbound",
		"network-bind", "system-socket", "iokit-open", "user-preference-read", "pseudo-tty"} {
		if !v.ops[op] {
			t.Errorf("operation %s from the notes is missing", op)
		}
	}
	for _, bad := range []string{`{"version":1,"filters":{"x":"nonsense"}}`, `{"version":2}`, `{"version":1,"extra":1}`} {
		if _, err := decodeVocabulary([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestParseDefines(t *testing.T) {
	p, err := ParseDefines([]string{"RUN_TAG=t", "RE=^(/a|/b=c)$"})
	if err != nil || p["RUN_TAG"] != "t" || p["RE"] != "^(/a|/b=c)$" {
		t.Fatalf("%v %v", p, err)
	}
	for _, bad := range [][]string{{"NOVALUE"}, {"=x"}, {"A=1", "A=2"}} {
		if _, err := ParseDefines(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
