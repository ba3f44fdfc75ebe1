package engine

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/logging"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

// testEngine is an engine on private temp dirs, compiling for the
// reference host (rootless as euid says), so tests need no root and give
// the same answer on every machine.
func testEngine(t *testing.T, euid int) (*Engine, string) {
	t.Helper()
	d := t.TempDir()
	logs := &bytes.Buffer{}
	e := New(Options{Root: filepath.Join(d, "root"), StateDir: filepath.Join(d, "state"), ConfigDir: filepath.Join(d, "conf"), EUID: &euid,
		Logger: slog.New(logging.NewHandler(logs, logging.Text, slog.LevelDebug))})
	testLogs[e] = logs
	e.probe = func(o host.Options) policy.HostFacts {
		f := policy.ReferenceFacts("amd64", host.Syscalls())
		f.Rootless, f.UID, f.GID = o.Rootless, uint32(euid), uint32(euid)
		f.CgroupLimits = !o.Rootless
		return f
	}
	os.MkdirAll(filepath.Join(d, "conf"), 0o755)
	return e, d
}

// testLogs holds what each test engine logged.
var testLogs = map[*Engine]*bytes.Buffer{}

func (e *Engine) records(t *testing.T) []audit.Record {
	t.Helper()
	recs, err := e.ReadLog()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func writeRuntimeYAML(t *testing.T, d, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(d, "conf", "runtime.yaml")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

// TestSelectPrecedence walks the one precedence order: an explicit tier,
// else the config's, else the connector's binding, else runtime.yaml's
// default, else the most restrictive tier (where one is required) or none.
func TestSelectPrecedence(t *testing.T) {
	e, d := testEngine(t, os.Geteuid())
	facts := e.runtimeFacts()
	sel := func(req Request) *Decision {
		t.Helper()
		req.Facts = facts
		dec, err := e.Select(req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return dec
	}
	check := func(dec *Decision, tier string, from Source) {
		t.Helper()
		if dec.Tier != tier || dec.From != from {
			t.Errorf("selected %s from %s, want %s from %s", dec.Tier, dec.From, tier, from)
		}
	}
	check(sel(Request{Operation: "t"}), "", FromNone)
	check(sel(Request{Operation: "t", RequireTier: true}), "strict", FromStrictest)
	writeRuntimeYAML(t, d, "default_tier: moderate\n", 0o644)
	check(sel(Request{Operation: "t"}), "moderate", FromDefault)
	check(sel(Request{Operation: "t", RequireTier: true}), "moderate", FromDefault)
	if err := e.Bind("agent-1", "strict_plus", ""); err != nil {
		t.Fatal(err)
	}
	check(sel(Request{Operation: "t", Connector: "agent-1"}), "strict_plus", FromBinding)
	check(sel(Request{Operation: "t", Connector: "agent-1", Config: &policy.Config{Tier: "strict"}}), "strict", FromConfig)
	check(sel(Request{Operation: "t", Connector: "agent-1", Tier: "strict", From: FromAnnotation}), "strict", FromAnnotation)
	// A connector that nothing binds gets the default, never no tier.
	os.Remove(filepath.Join(d, "conf", "runtime.yaml"))
	check(sel(Request{Operation: "t", Connector: "agent-2"}), "strict", FromStrictest)
	if b, ok, _ := e.bindings.Get("agent-2"); !ok || b.Tier != "strict" {
		t.Errorf("a selected connector is bound: %+v %v", b, ok)
	}
}

// TestSelectRefusalsAreAuditedWithCodes: each refusal is one blocked
// record with the error's code; the paired allowed request one allowed
// record.
func TestSelectRefusalsAreAuditedWithCodes(t *testing.T) {
	e, d := testEngine(t, os.Geteuid())
	facts := e.runtimeFacts()
	if err := e.Bind("agent-1", "strict", ""); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		req  Request
		code errcode.Code
	}{
		{"unknown tier", Request{Tier: "lax", From: FromFlag}, errcode.ProfileUnknown},
		{"downgrade by annotation", Request{Tier: "permissive", From: FromAnnotation, Connector: "agent-1"}, errcode.DowngradeBlocked},
		{"widening without a token", Request{Tier: "strict", From: FromFlag, Config: &policy.Config{Limits: policy.LimitsConfig{Pids: 1000}}}, errcode.PolicyConflict},
		{"bad token", Request{Tier: "strict", From: FromFlag, OverrideToken: "sbxo_nope", Config: &policy.Config{Limits: policy.LimitsConfig{Pids: 1000}}}, errcode.OverrideInvalid},
		{"bad connector", Request{Connector: "../x"}, errcode.ConfigInvalid},
	}
	for _, tc := range cases {
		before := len(e.records(t))
		tc.req.Operation, tc.req.Facts = "t", facts
		_, err := e.Select(tc.req)
		if errcode.Of(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			continue
		}
		recs := e.records(t)[before:]
		last := recs[len(recs)-1]
		if last.Result != audit.ResultBlocked || last.Code != string(tc.code) {
			t.Errorf("%s: last record %+v", tc.name, last)
		}
	}
	writeRuntimeYAML(t, d, "default_tier: permissive\n", 0o666)
	if _, err := e.Select(Request{Operation: "t", Facts: facts}); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("world-writable runtime.yaml used: %v", err)
	}
	os.Chmod(filepath.Join(d, "conf", "runtime.yaml"), 0o644)
	dec, err := e.Select(Request{Operation: "t", Facts: facts})
	if err != nil || dec.Tier != "permissive" || dec.Record.Result != audit.ResultAllowed {
		t.Errorf("paired trusted runtime.yaml: %+v %v", dec, err)
	}
}

// TestOverrideConsumedOnlyWhenNeeded: a narrowing config never uses the
// token; a widening uses it once and is audited with its label.
func TestOverrideConsumedOnlyWhenNeeded(t *testing.T) {
	e, _ := testEngine(t, os.Geteuid())
	tok, err := e.CreateOverride("ticket-1", time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	facts := e.runtimeFacts()
	narrow := &policy.Config{Limits: policy.LimitsConfig{Pids: 10}}
	if _, err := e.Select(Request{Operation: "t", Tier: "strict", From: FromFlag, Config: narrow, OverrideToken: tok, Facts: facts}); err != nil {
		t.Fatal(err)
	}
	wide := &policy.Config{Limits: policy.LimitsConfig{Pids: 1000}}
	dec, err := e.Select(Request{Operation: "t", Tier: "strict", From: FromFlag, Config: wide, OverrideToken: tok, Facts: facts})
	if err != nil || dec.Grants.Override == nil || dec.Grants.Limits.Pids != 1000 {
		t.Fatalf("authorized widening: %v", err)
	}
	if _, err := e.Select(Request{Operation: "t", Tier: "strict", From: FromFlag, Config: wide, OverrideToken: tok, Facts: facts}); errcode.Of(err) != errcode.OverrideInvalid {
		t.Errorf("the single use was spent by the narrowing config: %v", err)
	}
	found := false
	for _, r := range e.records(t) {
		found = found || (r.Kind == audit.KindOverride && strings.Contains(r.Reason, "ticket-1") && r.Operation == "t")
	}
	if !found {
		t.Error("the override is not audited")
	}
}

func plainSpec() *specs.Spec {
	mem := int64(512 << 20)
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "rootfs"},
		Process: &specs.Process{Args: []string{"sh"}, Cwd: "/", Env: []string{"PATH=/bin", "GITHUB_TOKEN=x", "LANG=C"}},
		Mounts:  []specs.Mount{{Destination: "/proc", Type: "proc", Source: "proc"}, {Destination: "/data", Type: "tmpfs", Source: "tmpfs", Options: []string{"rshared"}}},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace}},
			Resources: &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &mem}},
		},
	}
}

// TestSelectEnforcesSpec: with a tier the incoming spec is made to comply
// and every change is on the decision's record; without one it runs as
// given, but shared propagation is rewritten and limits a rootless caller
// cannot apply are reported, not dropped silently.
func TestSelectEnforcesSpec(t *testing.T) {
	e, _ := testEngine(t, os.Geteuid())
	facts := e.runtimeFacts()
	s := plainSpec()
	s.Mounts = s.Mounts[:1]
	dec, err := e.Select(Request{Operation: "create", Target: "c1", Tier: "moderate", From: FromAnnotation, Facts: facts, Spec: s})
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(dec.Spec.Process.Env, " ")
	if strings.Contains(env, "GITHUB_TOKEN") || !strings.Contains(env, "LANG=C") {
		t.Errorf("env not filtered by the tier's filter: %s", env)
	}
	details := strings.Join(dec.Record.Details, "\n")
	if !strings.Contains(details, "process.env: dropped GITHUB_TOKEN") || !strings.Contains(details, "Landlock exec shim") || dec.Record.Kind != audit.KindSelection {
		t.Errorf("record: %+v", dec.Record)
	}
	for _, u := range dec.Unenforced {
		if strings.HasPrefix(u, "process_exec=") {
			t.Errorf("process_exec is enforced by this runtime, yet listed: %s", u)
		}
	}
	// Without Landlock, process_exec=deny cannot be enforced: refused.
	noLL := facts
	noLL.LandlockABI = 0
	s = plainSpec()
	s.Mounts = s.Mounts[:1]
	if _, err := e.Select(Request{Operation: "create", Tier: "moderate", From: FromAnnotation, Facts: noLL, Spec: s}); errcode.Of(err) != errcode.Unenforceable {
		t.Errorf("no Landlock: %v", err)
	}
	dec, err = e.Select(Request{Operation: "create", Facts: facts, Spec: plainSpec()})
	if err != nil || dec.Grants != nil || dec.Spec.Mounts[1].Options[0] != "rslave" || dec.Spec.Process.Env[1] != "GITHUB_TOKEN=x" {
		t.Fatalf("untiered: %+v %v", dec, err)
	}

	rl, _ := testEngine(t, 1000)
	rfacts := rl.runtimeFacts()
	dec, err = rl.Select(Request{Operation: "create", Facts: rfacts, Spec: plainSpec()})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Spec.Linux.Resources.Memory != nil || len(dec.Unenforced) != 1 || !strings.Contains(dec.Unenforced[0], "memory.limit=536870912: not enforced") ||
		!strings.Contains(strings.Join(dec.Record.Details, " "), "not enforced") {
		t.Errorf("rootless limits: %+v %+v", dec.Unenforced, dec.Record)
	}
	if !strings.Contains(testLogs[rl].String(), "sbxrun: warning: not enforced: linux.resources.memory.limit=536870912") {
		t.Errorf("rootless limit not warned about:\n%s", testLogs[rl])
	}
}

// TestCheckSpecBadInput: specs no runtime could run are SANDBOX_SPEC_INVALID
// before anything is created.
func TestCheckSpecBadInput(t *testing.T) {
	bundle := t.TempDir()
	os.Mkdir(filepath.Join(bundle, "rootfs"), 0o755)
	os.Symlink("/", filepath.Join(bundle, "escape"))
	facts := policy.ReferenceFacts("amd64", host.Syscalls())
	if err := checkSpec(plainSpec(), bundle, facts); err != nil {
		t.Fatalf("paired good spec: %v", err)
	}
	cases := map[string]func(*specs.Spec){
		"no args":           func(s *specs.Spec) { s.Process.Args = nil },
		"empty program":     func(s *specs.Spec) { s.Process.Args = []string{""} },
		"no process":        func(s *specs.Spec) { s.Process = nil },
		"relative cwd":      func(s *specs.Spec) { s.Process.Cwd = "tmp" },
		"cwd through /proc": func(s *specs.Spec) { s.Process.Cwd = "/proc/self/fd/3" },
		"rootfs symlink":    func(s *specs.Spec) { s.Root.Path = "escape" },
		"missing rootfs":    func(s *specs.Spec) { s.Root.Path = "nope" },
		"rlimit over host": func(s *specs.Spec) {
			s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 1, Hard: 1 << 30}}
		},
		"soft over hard": func(s *specs.Spec) { s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_CORE", Soft: 2, Hard: 1}} },
		"memory 1":       func(s *specs.Spec) { *s.Linux.Resources.Memory.Limit = 1 },
	}
	for name, mutate := range cases {
		s := plainSpec()
		mutate(s)
		if err := checkSpec(s, bundle, facts); errcode.Of(err) != errcode.SpecInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReadRegularRefusesFIFO: a FIFO as config.json must not hang create.
func TestReadRegularRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.json")
	if err := mkfifo(fifo); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := readBundleSpec(dir); done <- err }()
	select {
	case err := <-done:
		if errcode.Of(err) != errcode.SpecInvalid || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO config.json hung")
	}
	os.Remove(fifo)
	os.WriteFile(fifo, []byte(`{"ociVersion":"1.2.0","process":{"args":["sh"],"cwd":"/"},"root":{"path":"rootfs"},"someFutureField":1}`), 0o644)
	if s, err := readBundleSpec(dir); err != nil || s.Process.Args[0] != "sh" {
		t.Errorf("paired regular file (with an unknown field, which OCI says to ignore): %v", err)
	}
}

// TestOutputPath: spec's destination is checked before anything is
// compiled; devices, FIFOs and directories are never written through.
func TestOutputPath(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "x.json")
	os.WriteFile(existing, []byte("{}"), 0o644)
	cases := []struct {
		out, bundle string
		force       bool
		ok          bool
	}{
		{"/dev/null", "", true, false},
		{"/dev/null", "", false, false},
		{dir, "", true, false},
		{existing, "", false, false},
		{existing, "", true, true},
		{filepath.Join(dir, "new.json"), "", false, true},
		{filepath.Join(dir, "nodir", "x.json"), "", false, false},
		{"", filepath.Join(dir, "nobundle"), false, false},
		{"", dir, false, true},
		{"-", "", false, true},
	}
	for _, tc := range cases {
		_, err := OutputPath(tc.out, tc.bundle, FormatOCI, tc.force)
		if (err == nil) != tc.ok || (err != nil && errcode.Of(err) != errcode.ConfigInvalid) {
			t.Errorf("OutputPath(%q, %q, force=%v): %v", tc.out, tc.bundle, tc.force, err)
		}
	}
}

// TestExplainRootlessTruth: as an unprivileged caller, explain shows the
// rootless form (no cgroup limits, the caller's own uid) without being
// asked; root sees the rootful form unless it asks.
func TestExplainRootlessTruth(t *testing.T) {
	rl, _ := testEngine(t, 4242)
	x, err := rl.Explain("strict", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Grants.Rootless || x.Grants.Limits.Cgroups || x.HostUID != 4242 || x.Grants.Identity.UID != 0 {
		t.Errorf("unprivileged explain: rootless=%v cgroups=%v host uid %d, container uid %d", x.Grants.Rootless, x.Grants.Limits.Cgroups, x.HostUID, x.Grants.Identity.UID)
	}
	root, _ := testEngine(t, 0)
	if x, _ := root.Explain("strict", nil, false); x.Grants.Rootless || x.HostUID != 65534 {
		t.Errorf("root explain: %+v", x.Grants.Identity)
	}
	if x, _ := root.Explain("strict", nil, true); !x.Grants.Rootless {
		t.Error("root explain --rootless")
	}
}

func TestParseAnnotations(t *testing.T) {
	cat := profiles.Builtin()
	s, err := ParseAnnotations(map[string]string{"dev.sbx.tier": "moderate", "dev.sbx.connector": "agent-7"}, cat)
	if err != nil || s.Tier != "moderate" || s.Connector != "agent-7" {
		t.Errorf("good annotations: %+v %v", s, err)
	}
	if s, err := ParseAnnotations(nil, cat); err != nil || s != (Selection{}) {
		t.Errorf("no annotations: %+v %v", s, err)
	}
	if _, err := ParseAnnotations(map[string]string{"dev.sbx.tier": "Strict"}, cat); errcode.Of(err) != errcode.ProfileUnknown {
		t.Errorf("bad tier: %v", err)
	}
	if _, err := ParseAnnotations(map[string]string{"dev.sbx.connector": "../x"}, cat); errcode.Of(err) != errcode.ConfigInvalid {
		t.Errorf("bad connector: %v", err)
	}
}

func FuzzParseAnnotations(f *testing.F) {
	f.Add("strict", "agent-1")
	f.Add("", "")
	f.Add("permissive\x00", "a b")
	cat := profiles.Builtin()
	f.Fuzz(func(t *testing.T, tier, connector string) {
		s, err := ParseAnnotations(map[string]string{"dev.sbx.tier": tier, "dev.sbx.connector": connector}, cat)
		if err == nil {
			if _, ok := cat.Tier(s.Tier); !ok || s.Connector != connector {
				t.Fatalf("accepted %q/%q as %+v", tier, connector, s)
			}
		} else if errcode.Of(err) == errcode.Internal {
			t.Fatalf("error without a stable code: %v", err)
		}
	})
}

func TestLoadRuntimeConfig(t *testing.T) {
	d := t.TempDir()
	cat, me := profiles.Builtin(), os.Geteuid()
	if c, err := LoadRuntimeConfig(d, me, cat); err != nil || c.DefaultTier != "" {
		t.Errorf("missing file: %+v %v", c, err)
	}
	for body, code := range map[string]errcode.Code{"default_tier: lax\n": errcode.ProfileUnknown, "defualt_tier: strict\n": errcode.ConfigInvalid} {
		os.WriteFile(filepath.Join(d, "runtime.yaml"), []byte(body), 0o644)
		if _, err := LoadRuntimeConfig(d, me, cat); errcode.Of(err) != code {
			t.Errorf("%q: %v, want %s", body, err, code)
		}
	}
	os.WriteFile(filepath.Join(d, "runtime.yaml"), []byte("default_tier: moderate\n"), 0o644)
	if c, err := LoadRuntimeConfig(d, me, cat); err != nil || c.DefaultTier != "moderate" {
		t.Errorf("good file: %+v %v", c, err)
	}
	if os.Chown(filepath.Join(d, "runtime.yaml"), 12345, 12345) == nil {
		if _, err := LoadRuntimeConfig(d, me, cat); errcode.Of(err) != errcode.StateUntrusted {
			t.Errorf("owned by another uid: %v", err)
		}
		os.Chown(filepath.Join(d, "runtime.yaml"), me, me)
	}
	os.Chmod(filepath.Join(d, "runtime.yaml"), 0o664)
	if _, err := LoadRuntimeConfig(d, me, cat); errcode.Of(err) != errcode.StateUntrusted {
		t.Errorf("group-writable: %v", err)
	}
}
