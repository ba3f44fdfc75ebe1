package seatbelt

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Finding codes. They are stable: scripts, tests and docs/darwin.md refer
// to them.
const (
	CodeSyntax          = "syntax"            // the text is not SBPL this reader accepts
	CodeVersion         = "version"           // (version 1) missing, repeated, wrong or not first
	CodeDefault         = "default-rule"      // not exactly one default rule
	CodeAllowDefault    = "allow-default"     // (allow default): the profile confines nothing
	CodeImport          = "import"            // (import …) pulls in private, version-dependent rules
	CodeNoSandbox       = "no-sandbox"        // (with no-sandbox): exec'd children run unconfined
	CodeUnknownForm     = "unknown-form"      // a top-level form other than version, allow, deny
	CodeUnknownOp       = "unknown-operation" // an operation outside the vocabulary
	CodeUnknownFilter   = "unknown-filter"    // a filter outside the vocabulary
	CodeUnknownModifier = "unknown-modifier"  // a (with …) modifier outside the vocabulary
	CodeUnknownConstant = "unknown-constant"  // a bare symbol outside the vetted constants
	CodeBadArgument     = "bad-argument"      // a filter, modifier or expression with the wrong arguments
	CodeNetworkAddress  = "network-address"   // an address that is not (*|localhost):(*|port)
	CodeLocalOutbound   = "local-outbound"    // (local …) in a network-outbound allow admits all egress
	CodeRegex           = "regex"             // a regex that is unanchored, invalid or not portable
	CodeParamUndefined  = "param-undefined"   // (param X) without -DX=
	CodeParamUnused     = "param-unused"      // -DX= without (param X)
	CodeStringLength    = "string-length"     // a string or parameter over 1024 bytes
	CodeControlChar     = "control-char"      // a string or parameter with a control character
	CodePath            = "path"              // a path that is relative, unclean or under /tmp, /var, /etc
	CodeRootSubpath     = "root-subpath"      // an allow on (subpath "/"): the whole filesystem
	CodeRootLiteral     = "root-literal"      // reading "/" denied and never re-allowed: dyld aborts
	CodeRenameBypass    = "rename-bypass"     // a read deny whose path can still be renamed away
	CodeSize            = "size"              // too many path filters
)

// maxPathFilters bounds the path and regex filters of one profile:
// sandbox-exec compiles thousands of filters in seconds, and a profile that
// large is a sign that literals should have been folded into a regex.
const maxPathFilters = 300

// Finding is one problem Lint found.
type Finding struct {
	Code    string `json:"code"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (f Finding) String() string { return fmt.Sprintf("line %d: %s: %s", f.Line, f.Code, f.Message) }

// Lint checks SBPL text against the rules in the notes: the shape of the
// profile, the vocabulary, network addresses, regexes, path canonical form
// and the parameters (params are the -D definitions the profile will be
// run with; every (param X) needs one and every definition needs a use).
// It returns no findings for a profile it accepts. Every profile Generate
// returns has passed it.
func Lint(text string, params map[string]string) []Finding {
	forms, err := parse(text)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return []Finding{{Code: CodeSyntax, Line: se.line, Message: se.msg}}
		}
		return []Finding{{Code: CodeSyntax, Message: err.Error()}}
	}
	l := &linter{params: params, used: map[string]int{}, unlinkDenied: map[string]bool{}, rootDeny: -1, rootAllow: -1}
	for _, f := range forms {
		l.literals(f)
	}
	l.forms(forms)
	l.finish()
	sort.SliceStable(l.findings, func(i, j int) bool {
		a, b := l.findings[i], l.findings[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Code < b.Code
	})
	return l.findings
}

type linter struct {
	params       map[string]string
	used         map[string]int // param name → line of first use
	findings     []Finding
	defaults     int
	pathFilters  int
	readDenied   []keyedFilter   // filters of read denies that do not also deny unlink
	unlinkDenied map[string]bool // filters (printed) of denies that cover unlink
	rootDeny     int             // index of the last form denying reads of "/"
	rootDenyLine int
	rootAllow    int // index of the last (allow file-read* (literal "/"))
}

type keyedFilter struct {
	key  string
	line int
}

// ruleCtx is what a filter check needs to know about its rule.
type ruleCtx struct {
	action   string
	outbound bool // an allow that covers network-outbound
}

func (l *linter) add(code string, line int, format string, args ...any) {
	l.findings = append(l.findings, Finding{Code: code, Line: line, Message: fmt.Sprintf(format, args...)})
}

func headOf(n node) string {
	if n.kind == kList && len(n.items) > 0 && n.items[0].kind == kSymbol {
		return n.items[0].text
	}
	return ""
}

// literals checks every string literal, wherever it appears.
func (l *linter) literals(n node) {
	switch n.kind {
	case kList:
		for _, it := range n.items {
			l.literals(it)
		}
	case kString, kRegex:
		l.checkString(n.line, "string", n.text)
	}
}

func (l *linter) checkString(line int, what, s string) {
	if len(s) > maxString {
		l.add(CodeStringLength, line, "%s of %d bytes exceeds the %d-byte limit of sandbox-exec", what, len(s), maxString)
	}
	if strings.IndexFunc(s, isControl) >= 0 {
		l.add(CodeControlChar, line, "%s %q contains a control character", what, s)
	}
}

func (l *linter) forms(forms []node) {
	versions := 0
	for i, f := range forms {
		switch head := headOf(f); head {
		case "version":
			versions++
			if i != 0 {
				l.add(CodeVersion, f.line, "(version 1) must be the first form")
			}
			if len(f.items) != 2 || f.items[1].kind != kNumber || f.items[1].text != "1" {
				l.add(CodeVersion, f.line, "expected (version 1)")
			}
		case "allow", "deny":
			l.rule(i, f)
		case "import":
			l.add(CodeImport, f.line, "import pulls in private, version-dependent rules that grant far too much")
		default:
			l.add(CodeUnknownForm, f.line, "unknown top-level form %q (only version, allow and deny)", head)
		}
	}
	switch {
	case versions == 0:
		l.add(CodeVersion, 1, "missing (version 1)")
	case versions > 1:
		l.add(CodeVersion, 1, "(version 1) appears %d times", versions)
	}
	if l.defaults != 1 {
		l.add(CodeDefault, 1, "want exactly one default rule, found %d", l.defaults)
	}
}

func (l *linter) rule(i int, f node) {
	action := f.items[0].text
	var ops []string
	var filters []node
	for _, it := range f.items[1:] {
		switch {
		case it.kind == kSymbol:
			if !vocab().ops[it.text] {
				l.add(CodeUnknownOp, it.line, "unknown operation %q: one unknown name makes sandbox-exec reject the whole profile", it.text)
			}
			ops = append(ops, it.text)
		case headOf(it) == "with":
			l.modifier(it)
		case it.kind == kList:
			filters = append(filters, it)
		default:
			l.add(CodeBadArgument, it.line, "unexpected %q in a rule", it.text)
		}
	}
	if len(ops) == 0 {
		l.add(CodeBadArgument, f.line, "%s without an operation", action)
		return
	}
	if hasAny(ops, "default") {
		l.defaultRule(i, f, action, ops, filters)
		return
	}
	ctx := ruleCtx{action: action, outbound: action == "allow" && hasAny(ops, "network-outbound", "network*")}
	for _, fl := range filters {
		l.filter(fl, ctx)
	}
	if action == "deny" {
		l.trackDeny(i, f.line, ops, filters)
		return
	}
	if hasAny(ops, "file*", "file-read*") {
		for _, fl := range filters {
			if s, _ := flat(fl); s == `(literal "/")` {
				l.rootAllow = i
			}
		}
	}
}

func (l *linter) defaultRule(i int, f node, action string, ops []string, filters []node) {
	l.defaults++
	if len(ops) > 1 || len(filters) > 0 {
		l.add(CodeBadArgument, f.line, "the default rule takes no other operation and no filter")
	}
	if action == "allow" {
		l.add(CodeAllowDefault, f.line, "(allow default) confines nothing; start from (deny default)")
		return
	}
	l.rootDeny, l.rootDenyLine = i, f.line
}

// trackDeny records what the rename and root checks need.
func (l *linter) trackDeny(i, line int, ops []string, filters []node) {
	reads := hasAny(ops, "file*", "file-read*", "file-read-data")
	unlinks := hasAny(ops, "file*", "file-write*", "file-write-unlink")
	for _, fl := range filters {
		key, _ := flat(fl)
		if unlinks {
			l.unlinkDenied[key] = true
		}
		if reads && !unlinks {
			l.readDenied = append(l.readDenied, keyedFilter{key, line})
		}
	}
	if !reads {
		return
	}
	root := len(filters) == 0
	for _, fl := range filters {
		root = root || l.matchesRoot(fl)
	}
	if root {
		l.rootDeny, l.rootDenyLine = i, line
	}
}

// matchesRoot reports whether a filter (with known parameters) matches
// the path "/".
func (l *linter) matchesRoot(fl node) bool {
	head := headOf(fl)
	if head == "" {
		return false
	}
	args := fl.items[1:]
	switch head {
	case "literal", "subpath", "prefix":
		v, known := l.quietStr(args)
		return known && v == "/"
	case "regex":
		v, known := l.quietStr(args)
		re, err := regexp.Compile(v)
		return known && err == nil && re.MatchString("/")
	case "require-any":
		for _, a := range args {
			if l.matchesRoot(a) {
				return true
			}
		}
	case "require-all":
		for _, a := range args {
			if !l.matchesRoot(a) {
				return false
			}
		}
		return len(args) > 0
	}
	return false
}

// quietStr evaluates a single string argument without reporting: the
// filter check has reported its problems already.
func (l *linter) quietStr(args []node) (string, bool) {
	if len(args) != 1 {
		return "", false
	}
	q := &linter{params: l.params, used: map[string]int{}}
	return q.strExpr(args[0])
}

func (l *linter) modifier(n node) {
	if len(n.items) < 2 || n.items[1].kind != kSymbol {
		l.add(CodeBadArgument, n.line, "(with …) needs a modifier name")
		return
	}
	name := n.items[1].text
	if name == "no-sandbox" {
		l.add(CodeNoSandbox, n.line, "(with no-sandbox) lets exec'd programs run outside the sandbox")
		return
	}
	want, ok := vocab().Modifiers[name]
	if !ok {
		l.add(CodeUnknownModifier, n.line, "unknown modifier %q", name)
		return
	}
	args := n.items[2:]
	if len(args) != want {
		l.add(CodeBadArgument, n.line, "(with %s) takes %d argument(s), got %d", name, want, len(args))
		return
	}
	for _, a := range args {
		l.strExpr(a)
	}
}

func (l *linter) filter(fl node, ctx ruleCtx) {
	name := headOf(fl)
	k, ok := vocab().Filters[name]
	switch {
	case name == "":
		l.add(CodeBadArgument, fl.line, "a filter must start with its name")
		return
	case !ok && vocab().exprs[name]:
		l.add(CodeBadArgument, fl.line, "(%s …) is an expression, not a filter", name)
		return
	case !ok:
		l.add(CodeUnknownFilter, fl.line, "unknown filter %q: one unknown name makes sandbox-exec reject the whole profile", name)
		return
	}
	args := fl.items[1:]
	switch k {
	case argPath, argRegex, argString:
		l.stringFilter(name, k, args, fl.line, ctx)
	case argFilters, argFilter:
		if len(args) == 0 || k == argFilter && len(args) != 1 {
			l.add(CodeBadArgument, fl.line, "(%s …) has %d nested filter(s)", name, len(args))
		}
		for _, a := range args {
			l.filter(a, ctx)
		}
	case argConstant:
		l.constant(name, args, fl.line)
	case argNumber:
		if len(args) != 1 || args[0].kind != kNumber {
			l.add(CodeBadArgument, fl.line, "(%s …) takes one number", name)
		}
	case argAddress:
		l.address(name, args, fl.line, ctx)
	}
}

func (l *linter) stringFilter(name, k string, args []node, line int, ctx ruleCtx) {
	if len(args) != 1 {
		l.add(CodeBadArgument, line, "(%s …) takes one argument, got %d", name, len(args))
		return
	}
	v, known := l.strExpr(args[0])
	if k == argPath || k == argRegex {
		l.pathFilters++
	}
	if !known {
		return
	}
	switch k {
	case argPath:
		l.checkPath(name, v, line, ctx)
	case argRegex:
		if err := checkRegex(v); err != nil {
			l.add(CodeRegex, line, "%v", err)
		}
	}
}

func (l *linter) constant(name string, args []node, line int) {
	if len(args) != 1 || args[0].kind != kSymbol {
		l.add(CodeBadArgument, line, "(%s …) takes one constant", name)
		return
	}
	if !vocab().consts[args[0].text] {
		l.add(CodeUnknownConstant, line, "constant %q is not vetted: an unknown symbol makes sandbox-exec reject the whole profile on some macOS versions", args[0].text)
	}
}

func (l *linter) address(name string, args []node, line int, ctx ruleCtx) {
	if name == "local" && ctx.outbound {
		l.add(CodeLocalOutbound, line, "(local …) on network-outbound matches the unbound source address and admits all egress; use (remote ip \"localhost:PORT\")")
	}
	if len(args) != 2 || args[0].kind != kSymbol {
		l.add(CodeBadArgument, line, "(%s PROTOCOL \"HOST:PORT\") expected", name)
		return
	}
	if !vocab().protos[args[0].text] {
		l.add(CodeNetworkAddress, line, "unknown protocol %q", args[0].text)
	}
	if v, known := l.strExpr(args[1]); known {
		if err := checkAddress(v); err != nil {
			l.add(CodeNetworkAddress, line, "%v", err)
		}
	}
}

// strExpr evaluates a string expression with the known parameters. known
// is false when a parameter is undefined or the expression is malformed
// (both reported).
func (l *linter) strExpr(n node) (string, bool) {
	switch n.kind {
	case kString, kRegex:
		return n.text, true
	case kList:
		switch headOf(n) {
		case "param":
			return l.param(n)
		case "string-append":
			var b strings.Builder
			known := true
			for _, a := range n.items[1:] {
				v, k := l.strExpr(a)
				known = known && k
				b.WriteString(v)
			}
			return b.String(), known
		case "regex-quote":
			if len(n.items) == 2 {
				v, k := l.strExpr(n.items[1])
				return regexp.QuoteMeta(v), k
			}
		}
	}
	l.add(CodeBadArgument, n.line, "expected a string, (param \"NAME\"), (string-append …) or (regex-quote …)")
	return "", false
}

func (l *linter) param(n node) (string, bool) {
	if len(n.items) != 2 || n.items[1].kind != kString {
		l.add(CodeBadArgument, n.line, "(param \"NAME\") takes one literal name")
		return "", false
	}
	name := n.items[1].text
	if _, seen := l.used[name]; !seen {
		l.used[name] = n.line
	}
	v, ok := l.params[name]
	return v, ok
}

func (l *linter) checkPath(filter, v string, line int, ctx ruleCtx) {
	switch {
	case !strings.HasPrefix(v, "/"):
		l.add(CodePath, line, "%q is not absolute: SBPL expands neither ~ nor relative paths", v)
	case path.Clean(v) != v:
		l.add(CodePath, line, "%q is not clean (want %q): seatbelt matches resolved paths", v, path.Clean(v))
	case v == "/" && filter != "literal" && ctx.action == "allow":
		l.add(CodeRootSubpath, line, "(%s \"/\") allows the whole filesystem", filter)
	default:
		for _, link := range privateLinks {
			if v == link && filter != "literal" || strings.HasPrefix(v, link+"/") {
				l.add(CodePath, line, "%q is under the symlink %s and never matches: seatbelt sees /private%s", v, link, link)
			}
		}
	}
}

// checkRegex accepts anchored regexes in the portable subset of the notes
// (^ $ . * + ? [] [^] () | and backslash-escaped punctuation): the
// sandbox's regex engine is not Go's, so Perl classes, flags and intervals
// might compile here and mean something else there.
func checkRegex(v string) error {
	if !strings.HasPrefix(v, "^") {
		return fmt.Errorf("regex %q is not anchored with ^", v)
	}
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("regex %q does not compile: %v", v, err)
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			if i+1 < len(v) && isAlnum(v[i+1]) {
				return fmt.Errorf("regex %q uses \\%c, which is not portable", v, v[i+1])
			}
			i++
		case c == '{' || c == '}':
			return fmt.Errorf("regex %q uses an interval, which is not portable", v)
		case c == '(' && i+1 < len(v) && v[i+1] == '?':
			return fmt.Errorf("regex %q uses (?…), which is not portable", v)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// checkAddress enforces the only address forms seatbelt understands: the
// host is * or localhost, the port * or a number. A hostname or an IP
// address is not a narrower rule but an error (Bazel #10068, Nix #10078).
func checkAddress(a string) error {
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return fmt.Errorf("address %q: want HOST:PORT", a)
	}
	host, port := a[:i], a[i+1:]
	if host != "*" && host != "localhost" {
		return fmt.Errorf("address %q: host must be * or localhost", a)
	}
	if port == "*" {
		return nil
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("address %q: port must be * or 1-65535", a)
	}
	return nil
}

func (l *linter) finish() {
	if l.rootDeny > l.rootAllow {
		l.add(CodeRootLiteral, l.rootDenyLine, "reading \"/\" is denied and not re-allowed afterwards: dyld aborts; end with (allow file-read* (literal \"/\"))")
	}
	for _, r := range l.readDenied {
		if !l.unlinkDenied[r.key] {
			l.add(CodeRenameBypass, r.line, "%s denies reads but not file-write-unlink: renaming the path defeats the deny", r.key)
		}
	}
	if l.pathFilters > maxPathFilters {
		l.add(CodeSize, 1, "%d path filters (limit %d): fold repeated literals into a regex", l.pathFilters, maxPathFilters)
	}
	l.checkParams()
}

func (l *linter) checkParams() {
	names := make([]string, 0, len(l.used))
	for n := range l.used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v, ok := l.params[n]
		if !ok {
			l.add(CodeParamUndefined, l.used[n], "(param %q) has no -D%s=: the profile fails to load", n, n)
			continue
		}
		l.checkString(l.used[n], "parameter "+n, v)
	}
	defined := make([]string, 0, len(l.params))
	for n := range l.params {
		defined = append(defined, n)
	}
	sort.Strings(defined)
	for _, n := range defined {
		if _, ok := l.used[n]; !ok {
			l.add(CodeParamUnused, 0, "-D%s= is defined but the profile never uses (param %q)", n, n)
		}
	}
}

func hasAny(ops []string, want ...string) bool {
	for _, o := range ops {
		for _, w := range want {
			if o == w {
				return true
			}
		}
	}
	return false
}

// ParseDefines reads sandbox-exec style definitions ("NAME=VALUE", as
// given to -D) into the params of Lint. A definition without '=' or a
// name given twice is an error: sandbox-exec would silently use one.
func ParseDefines(defs []string) (map[string]string, error) {
	params := make(map[string]string, len(defs))
	for _, d := range defs {
		name, value, ok := strings.Cut(d, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("definition %q: want NAME=VALUE", d)
		}
		if _, dup := params[name]; dup {
			return nil, fmt.Errorf("%s is defined twice", name)
		}
		params[name] = value
	}
	return params, nil
}
