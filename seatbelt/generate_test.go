package seatbelt

import (
	"slices"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

func TestArgvShape(t *testing.T) {
	p := generate(t, "moderate", nil, withOpts(PresetAgent, nil))
	argv := p.Argv(nil)
	if argv[0] != "/usr/bin/sandbox-exec" || argv[1] != "-p" || argv[2] != p.Text {
		t.Fatalf("argv starts %q", argv[:2])
	}
	sep := slices.Index(argv, "--")
	if sep < 0 || argv[sep+1] != "/usr/bin/env" || argv[sep+2] != "-i" {
		t.Fatalf("no `-- /usr/bin/env -i` in %q", argv)
	}
	for i, d := range p.Params {
		if argv[3+i] != "-D"+d.Name+"="+d.Value {
			t.Errorf("argv[%d] = %q, want the definition of %s", 3+i, argv[3+i], d.Name)
		}
	}
	if !slices.IsSortedFunc(p.Params, func(a, b Param) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("params are not sorted")
	}
	tail := argv[sep+3:]
	if got := tail[len(tail)-1]; got != "/bin/sh" {
		t.Errorf("command %q, want the canonical program", got)
	}
	if got := p.Argv([]string{"/bin/echo", "hi"}); !slices.Equal(got[len(got)-2:], []string{"/bin/echo", "hi"}) {
		t.Errorf("explicit command not used: %q", got[len(got)-2:])
	}
}

// TestEnvironmentFiltered: the argv passes the Grants' filtered variables
// and TMPDIR, and nothing that looks like a credential.
func TestEnvironmentFiltered(t *testing.T) {
	p := generate(t, "moderate", nil, withOpts(PresetNone, nil))
	joined := strings.Join(p.Argv(nil), "\n")
	for _, secret := range []string{"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "do-not-pass"} {
		if strings.Contains(joined, secret) {
			t.Errorf("argv passes %s", secret)
		}
	}
	for _, want := range []string{"LANG=en_US.UTF-8", "TMPDIR=" + p.Param(ParamRunTmp)} {
		if !slices.Contains(p.Argv(nil), want) {
			t.Errorf("argv lacks %s", want)
		}
	}
	strict := generate(t, "strict", nil, withOpts(PresetNone, nil))
	if got := envNames(strict); !slices.Equal(got, []string{"HOME", "PATH", "TMPDIR"}) {
		t.Errorf("strict passes %v, want the baseline and TMPDIR", got)
	}
}

func envNames(p *Profile) []string {
	var out []string
	for _, e := range p.Env {
		out = append(out, e.Name)
	}
	return out
}

// TestScratchIsPerRun: only RUN_TMP is writable, never /tmp as a whole.
func TestScratchIsPerRun(t *testing.T) {
	for _, c := range goldenCases() {
		p := generate(t, c.tier, c.cfg, c.opts)
		if got := p.Param(ParamRunTmp); got != "/private/var/folders/xy/T/sbxrun-test" {
			t.Errorf("%s: RUN_TMP = %q", c.name, got)
		}
		for _, bad := range []string{`(subpath "/private/tmp")`, `(subpath "/tmp")`, `(subpath "/private/var/folders")`} {
			if strings.Contains(p.Text, bad) {
				t.Errorf("%s: grants %s", c.name, bad)
			}
		}
	}
}

func TestProcessExec(t *testing.T) {
	initialOnly := `(allow process-exec (literal "/usr/bin/env") (literal (param "PROGRAM")))`
	for tier, wantInitial := range map[string]bool{"strict": true, "strict_plus": true, "moderate": true, "permissive": false} {
		p := generate(t, tier, nil, withOpts(PresetNone, nil))
		if strings.Contains(p.Text, initialOnly) != wantInitial {
			t.Errorf("%s: initial-only exec rule present = %v", tier, !wantInitial)
		}
		if strings.Contains(p.Text, "(allow process-exec)") == wantInitial {
			t.Errorf("%s: unrestricted exec = %v", tier, wantInitial)
		}
		if strings.Contains(p.Text, "no-sandbox") && !strings.Contains(p.Text, "never carries (with no-sandbox)") {
			t.Errorf("%s: mentions no-sandbox in a rule", tier)
		}
	}
	// A symlinked program is allowed at its resolved path (codex #38286).
	p := generate(t, "moderate", &policy.Config{Process: policy.ProcessConfig{Args: []string{"python3"}}}, withOpts(PresetNone, nil))
	if got := p.Param(ParamProgram); got != "/opt/homebrew/Cellar/python/3.12/bin/python3.12" || p.Command[0] != got {
		t.Errorf("program %q, command %q", got, p.Command)
	}
}

func TestNetworkLevels(t *testing.T) {
	for _, c := range []struct {
		tier      string
		cfg       *policy.Config
		mod       func(*Options)
		want, not []string
	}{
		{"strict", nil, nil, nil, []string{"network-outbound", "network-bind"}},
		{"moderate", nil, nil, []string{`(allow network-outbound (remote ip "localhost:3128"))`}, []string{"localhost:*", "network-bind"}},
		{"moderate", nil, func(o *Options) { o.ProxyPort = 0 }, nil, []string{"network-outbound"}},
		{"moderate", nil, func(o *Options) { o.Localhost = true },
			[]string{`(allow network-outbound (remote ip "localhost:*"))`, `(allow network-bind network-inbound (local ip "localhost:*"))`}, nil},
		{"permissive", nil, nil, []string{"(allow network-outbound network-inbound network-bind)"}, []string{"localhost:"}},
	} {
		p := generate(t, c.tier, c.cfg, withOpts(PresetNone, c.mod))
		for _, w := range c.want {
			if !strings.Contains(p.Text, w) {
				t.Errorf("%s: missing %s", c.tier, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(p.Text, n) {
				t.Errorf("%s: unexpected %s", c.tier, n)
			}
		}
	}
}

// TestPathsNeverInText: a path that would close an SBPL string produces
// the same text as any other path; it travels only as a parameter.
func TestPathsNeverInText(t *testing.T) {
	plain := generate(t, "moderate", nil, withOpts(PresetAgent, nil))
	evil := `/Users/test/src/a")) (allow default) (allow file-read* (subpath "x`
	p := generate(t, "moderate", nil, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = evil }))
	if p.Text != plain.Text {
		t.Fatalf("the project path changed the text:\n%s", firstDiff(plain.Text, p.Text))
	}
	if p.Param(ParamProject) != evil {
		t.Errorf("PROJECT_ROOT = %q", p.Param(ParamProject))
	}
	if f := Lint(p.Text, p.ParamMap()); len(f) > 0 {
		t.Errorf("lint: %v", f)
	}
}

func TestHostSystemDirGrantsSkipped(t *testing.T) {
	facts := testFacts()
	facts.HostSystemDirs = []string{"/bin", "/usr"}
	g, err := policy.Compile("permissive", nil, facts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.FS.Paths) != 2 {
		t.Fatalf("policy added %d paths", len(g.FS.Paths))
	}
	p, err := Generate(g, withOpts(PresetNone, nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.Param("READ_0") != "" || strings.Contains(p.Text, "remap") {
		t.Errorf("the Linux /run/host mounts became roots: %v", p.Params)
	}
}

// TestGenerateRefuses: invalid input is an error with a policy code,
// never a profile with a rule left out.
func TestGenerateRefuses(t *testing.T) {
	moderate := compile(t, "moderate", nil)
	strict := compile(t, "strict", nil)
	versioned := *moderate
	versioned.Version = 99
	mode := *moderate
	mode.Net.Mode = "host"
	badEnv := *moderate
	badEnv.Env.Vars = []policy.EnvVar{{Name: "A=B", Value: "x"}}
	badAllow := *moderate
	badAllow.Net.Allow = []string{"not an address"}
	noArgs := *moderate
	noArgs.Process.Args = nil
	readDeny := *strict
	readDeny.FS.Paths = []policy.PathGrant{{Source: "/Users/test/data", Destination: "/Users/test/data"}}
	sock := newFakeFS(map[string]string{"/Users/test/sock": "/private/var/run/docker.sock", "/tmp": "/private/tmp"}, "/Users/test/src/proj")
	withSock := compile(t, "moderate", &policy.Config{FS: policy.FSConfig{Read: []policy.PathMount{{Source: "/Users/test/sock"}}}})
	insideSSH := compile(t, "moderate", &policy.Config{FS: policy.FSConfig{Read: []policy.PathMount{{Source: "/Users/test/.ssh/keys"}}}})

	for name, c := range map[string]struct {
		g    *policy.Grants
		opts Options
	}{
		"nil grants":                {nil, withOpts(PresetNone, nil)},
		"unknown grants version":    {&versioned, withOpts(PresetNone, nil)},
		"mode contradicts level":    {&mode, withOpts(PresetNone, nil)},
		"variable name with =":      {&badEnv, withOpts(PresetNone, nil)},
		"invalid allowlist address": {&badAllow, withOpts(PresetNone, nil)},
		"no program":                {&noArgs, withOpts(PresetNone, nil)},
		"paths at fs_read=deny":     {&readDeny, withOpts(PresetNone, nil)},
		"no home":                   {moderate, withOpts(PresetNone, func(o *Options) { o.Home = "" })},
		"home with ~":               {moderate, withOpts(PresetNone, func(o *Options) { o.Home = "~" })},
		"home is /":                 {moderate, withOpts(PresetNone, func(o *Options) { o.Home = "/" })},
		"agent without project":     {moderate, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = "" })},
		"project is /":              {moderate, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = "/" })},
		"project with a newline":    {moderate, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = "/Users/test/a\nb" })},
		"project inside ~/.ssh":     {moderate, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = "~/.ssh/x" })},
		"program inside ~/.claude": {moderate, withOpts(PresetNone, func(o *Options) {
			o.LookPath = func(string, string) (string, error) { return "/Users/test/.claude/local/claude", nil }
		})},
		"project holds /etc/shadow": {moderate, withOpts(PresetAgent, func(o *Options) { o.ProjectRoot = "/private" })},
		"declared path inside .ssh": {insideSSH, withOpts(PresetNone, nil)},
		"symlink to docker.sock":    {withSock, withOpts(PresetNone, func(o *Options) { o.Resolve = sock.resolve })},
		"tmp dir is /":              {moderate, withOpts(PresetNone, func(o *Options) { o.TmpDir = "/" })},
		"bad tag":                   {moderate, withOpts(PresetNone, func(o *Options) { o.Tag = "a/../b" })},
		"unknown preset":            {moderate, withOpts(PresetNone, func(o *Options) { o.Preset = "kiosk" })},
		"proxy port out of range":   {moderate, withOpts(PresetNone, func(o *Options) { o.ProxyPort = 70000 })},
		"localhost at network deny": {strict, withOpts(PresetNone, func(o *Options) { o.Localhost = true })},
		"bad sensitive glob":        {moderate, withOpts(PresetNone, func(o *Options) { o.SensitiveGlobs = []string{"[a/b]"} })},
		"program not found": {moderate, withOpts(PresetNone, func(o *Options) {
			o.LookPath = func(string, string) (string, error) { return "", errNotFound }
		})},
	} {
		_, err := Generate(c.g, c.opts)
		if err == nil {
			t.Errorf("%s: generated", name)
			continue
		}
		if code := errcode.Of(err); code != errcode.ConfigInvalid {
			t.Errorf("%s: code %s (%v)", name, code, err)
		}
	}
}

var errNotFound = errcode.Errorf(errcode.ConfigInvalid, "not found")

func TestRandomTag(t *testing.T) {
	o := withOpts(PresetNone, nil)
	o.Tag = ""
	a, err := Generate(compile(t, "strict", nil), o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(compile(t, "strict", nil), o)
	if a.Tag == b.Tag || !tagPattern().MatchString(a.Tag) || a.Param(ParamTag) != a.Tag {
		t.Errorf("tags %q and %q", a.Tag, b.Tag)
	}
	if a.Text != b.Text {
		t.Error("the tag changed the text")
	}
}

func TestUnenforcedListed(t *testing.T) {
	p := generate(t, "strict", nil, withOpts(PresetNone, nil))
	if len(p.Unenforced) == 0 {
		t.Fatal("nothing listed")
	}
	for _, u := range p.Unenforced {
		if !strings.Contains(p.Text, ";   - "+u) {
			t.Errorf("%q is not in the header", u)
		}
	}
	narrowed := generate(t, "permissive", &policy.Config{FS: policy.FSConfig{Read: []policy.PathMount{{Source: "/Users/test/data", Destination: "/data"}}}}, withOpts(PresetNone, nil))
	if !slices.ContainsFunc(narrowed.Unenforced, func(s string) bool { return strings.Contains(s, "cannot remap") }) {
		t.Errorf("a remapped destination is not reported: %v", narrowed.Unenforced)
	}
}

func TestPresets(t *testing.T) {
	agent := generate(t, "moderate", nil, withOpts(PresetAgent, nil))
	capture := generate(t, "moderate", nil, withOpts(PresetCapture, nil))
	none := generate(t, "moderate", nil, withOpts(PresetNone, nil))
	if !strings.Contains(agent.Text, `(subpath (string-append (param "PROJECT_ROOT") "/.git/hooks"))`) || agent.Dir != "/Users/test/src/proj" {
		t.Error("agent: no git protection or wrong working directory")
	}
	if !strings.Contains(capture.Text, "com.apple.windowserver.active") || strings.Contains(none.Text, "windowserver") {
		t.Error("capture rules missing, or present without the preset")
	}
	// The capture preset adds its section and nothing else.
	if extra := strings.Replace(capture.Text, captureSection(t), "", 1); strings.Replace(extra, "preset capture", "preset none", 1) != none.Text {
		t.Errorf("the capture preset changes more than its section:\n%s", firstDiff(none.Text, extra))
	}
	// At fs_read=deny the agent preset grants no project: the tier decides.
	strict := generate(t, "strict", nil, withOpts(PresetAgent, nil))
	if strict.Param(ParamProject) != "" || strict.Dir != strict.Param(ParamRunTmp) {
		t.Errorf("strict agent grants the project: %v", strict.Params)
	}
}

func captureSection(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	s := capture()
	b.WriteString("\n" + comment(";;", s.title+": "+s.why))
	for _, r := range s.rules {
		b.WriteString(comment(";", r.why))
		text, err := render(r.n)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(text + "\n")
	}
	return b.String()
}

func TestEveryCapabilityLevelGenerates(t *testing.T) {
	for _, c := range profiles.Capabilities {
		for _, level := range profiles.Levels(c) {
			cfg := &policy.Config{Capabilities: map[profiles.Capability]profiles.Access{c: level}}
			switch {
			case c == profiles.FSWrite && level != profiles.Deny:
				cfg.Capabilities[profiles.FSRead] = profiles.Scoped
			case c == profiles.FSRead && level == profiles.Deny:
				cfg.Capabilities[profiles.FSWrite] = profiles.Deny // policy: nothing written that cannot be read
			}
			g, err := policy.Compile("permissive", cfg, testFacts(), nil)
			if err != nil {
				t.Fatalf("%s=%s: %v", c, level, err)
			}
			if _, err := Generate(g, withOpts(PresetAgent, nil)); err != nil {
				t.Errorf("%s=%s: %v", c, level, err)
			}
		}
	}
}
