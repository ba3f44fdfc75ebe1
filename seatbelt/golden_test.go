package seatbelt

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type goldenCase struct {
	name string
	tier string
	cfg  *policy.Config
	opts Options
}

func withOpts(preset Preset, mod func(*Options)) Options {
	o := testOptions(preset)
	if preset != PresetAgent {
		o.ProjectRoot = ""
	}
	if mod != nil {
		mod(&o)
	}
	return o
}

func caps(kv ...string) map[profiles.Capability]profiles.Access {
	m := map[profiles.Capability]profiles.Access{}
	for i := 0; i < len(kv); i += 2 {
		m[profiles.Capability(kv[i])] = profiles.Access(kv[i+1])
	}
	return m
}

// goldenCases are every tier with every preset, and configs that narrow a
// tier one capability (or path list) at a time.
func goldenCases() []goldenCase {
	var cs []goldenCase
	for _, tier := range profiles.Builtin().Names() {
		for _, preset := range []Preset{PresetNone, PresetAgent, PresetCapture} {
			name := tier
			if preset != PresetNone {
				name += "." + string(preset)
			}
			cs = append(cs, goldenCase{name: name, tier: tier, opts: withOpts(preset, nil)})
		}
	}
	return append(cs,
		goldenCase{name: "moderate.project", tier: "moderate", opts: withOpts(PresetNone, func(o *Options) { o.ProjectRoot = "/Users/test/src/proj" })},
		goldenCase{name: "moderate.fs-read", tier: "moderate", cfg: &policy.Config{FS: policy.FSConfig{
			Read: []policy.PathMount{{Source: "/Users/test/data"}, {Source: "/Users/test/src/lib"}}}}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "moderate.net-deny", tier: "moderate", cfg: &policy.Config{Capabilities: caps("network_access", "deny")}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "moderate.ipc-deny", tier: "moderate", cfg: &policy.Config{Capabilities: caps("ipc", "deny")}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "moderate.localhost", tier: "moderate", opts: withOpts(PresetAgent, func(o *Options) { o.Localhost = true })},
		goldenCase{name: "moderate.no-proxy", tier: "moderate", opts: withOpts(PresetNone, func(o *Options) { o.ProxyPort = 0 })},
		goldenCase{name: "moderate.terminal", tier: "moderate", cfg: &policy.Config{Process: policy.ProcessConfig{Args: []string{"python3", "-i"}, Terminal: true}}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "permissive.exec-deny", tier: "permissive", cfg: &policy.Config{Capabilities: caps("process_exec", "deny")}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "permissive.fs", tier: "permissive", cfg: &policy.Config{FS: policy.FSConfig{
			Read:  []policy.PathMount{{Source: "/Users/test/data", Destination: "/data"}},
			Write: []policy.PathMount{{Source: "/Users/test/data/out"}}}}, opts: withOpts(PresetNone, nil)},
		goldenCase{name: "permissive.narrow", tier: "permissive", cfg: narrowConfig(), opts: withOpts(PresetAgent, nil)},
	)
}

// narrowConfig narrows permissive on every capability and declares paths,
// destinations and variables: the richest input, used for determinism.
func narrowConfig() *policy.Config {
	return &policy.Config{
		Capabilities: caps("network_access", "filtered", "fs_read", "scoped", "fs_write", "scoped", "process_exec", "deny", "ipc", "scoped", "env_access", "filtered"),
		FS: policy.FSConfig{
			Read:  []policy.PathMount{{Source: "/Users/test/data"}, {Source: "/Users/test/src/lib"}, {Source: "/opt/tools"}},
			Write: []policy.PathMount{{Source: "/Users/test/data/out"}, {Source: "/Users/test/data/cache"}},
		},
		Network: policy.NetworkConfig{Allow: []string{"api.example.com:443", "proxy.golang.org:443", "10.0.0.1:8080"}},
		Env: policy.EnvConfig{
			Set:  map[string]string{"MODE": "ci", "LEVEL": "3", "NAME": "x"},
			Pass: []string{"LANG", "TERM", "NODE_ENV"},
			Deny: []string{"DEBUG*", "TRACE*"},
		},
	}
}

func argvJSON(t *testing.T, p *Profile) []byte {
	t.Helper()
	b, err := json.MarshalIndent(p.Argv(nil), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			p := generate(t, c.tier, c.cfg, c.opts)
			if f := Lint(p.Text, p.ParamMap()); len(f) > 0 {
				t.Fatalf("generated profile fails lint: %v", f)
			}
			checkGolden(t, c.name+".sb", []byte(p.Text))
			checkGolden(t, c.name+".argv.json", argvJSON(t, p))
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./seatbelt -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./seatbelt -update rewrites it):\n%s", file, firstDiff(string(want), string(got)))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return ""
}

// TestDeterministicUnderShuffle compiles the same config with its lists
// shuffled and duplicated sensitive globs in any order: the profile and the
// argv must not change by a byte.
func TestDeterministicUnderShuffle(t *testing.T) {
	base := narrowConfig()
	opts := withOpts(PresetAgent, nil)
	want := generate(t, "permissive", base, opts)
	wantArgv := argvJSON(t, want)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 30; i++ {
		cfg := narrowConfig()
		shuffle(r, cfg.FS.Read)
		shuffle(r, cfg.FS.Write)
		shuffle(r, cfg.Network.Allow)
		shuffle(r, cfg.Env.Pass)
		shuffle(r, cfg.Env.Deny)
		o := opts
		o.SensitiveGlobs = append(append([]string{}, DefaultSensitiveGlobs...), DefaultSensitiveGlobs[:3]...)
		shuffle(r, o.SensitiveGlobs)
		got := generate(t, "permissive", cfg, o)
		if got.Text != want.Text {
			t.Fatalf("shuffle %d: text differs:\n%s", i, firstDiff(want.Text, got.Text))
		}
		if g := argvJSON(t, got); !bytes.Equal(g, wantArgv) {
			t.Fatalf("shuffle %d: argv differs:\n%s", i, firstDiff(string(wantArgv), string(g)))
		}
	}
}

func shuffle[T any](r *rand.Rand, s []T) {
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// TestTextIndependentOfMachine generates the same Grants for two machines
// with different homes, temp dirs, projects and symlinks: the text is the
// same, only the parameters differ.
func TestTextIndependentOfMachine(t *testing.T) {
	g := compile(t, "permissive", narrowConfig())
	a, err := Generate(g, withOpts(PresetAgent, nil))
	if err != nil {
		t.Fatal(err)
	}
	other := newFakeFS(map[string]string{"/home": "/System/Volumes/Data/home", "/tmp": "/private/tmp"},
		"/System/Volumes/Data/home/alice/work/repo", "/Users/test/data/out", "/Users/test/src/lib", "/opt/tools")
	b, err := Generate(g, Options{ProjectRoot: "/home/alice/work/repo", Home: "/home/alice", TmpDir: "/tmp",
		Preset: PresetAgent, Tag: "sbxrun-other", ProxyPort: 3128, Resolve: other.resolve, LookPath: testLookPath})
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text {
		t.Fatalf("text depends on the machine:\n%s", firstDiff(a.Text, b.Text))
	}
	if a.Param(ParamProject) == b.Param(ParamProject) || b.Param(ParamProject) != "/System/Volumes/Data/home/alice/work/repo" {
		t.Errorf("project params: %q and %q", a.Param(ParamProject), b.Param(ParamProject))
	}
	for _, p := range a.Params {
		// The tag and /bin/sh are short enough to occur in comments.
		if strings.Contains(a.Text, p.Value) && p.Name != ParamTag && p.Name != ParamProgram {
			t.Errorf("the value of %s (%q) appears in the text", p.Name, p.Value)
		}
	}
}
