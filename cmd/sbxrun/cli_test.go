package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sbxrun-cli-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "sbxrun")
	if out, err := exec.Command("go", "build", "-tags", "seccomp,urfave_cli_no_docs,netgo,osusergo", "-ldflags", "-extldflags=-static", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// sbx runs the built binary with private state and config dirs.
func sbx(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := result{o.String(), e.String(), 0}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		r.code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func dirs(t *testing.T) []string {
	d := t.TempDir()
	return []string{"SBXRUN_STATE_DIR=" + filepath.Join(d, "state"), "SBXRUN_CONFIG_DIR=" + filepath.Join(d, "conf")}
}

func TestSpecPipesIntoLint(t *testing.T) {
	env := dirs(t)
	for _, tier := range []string{"strict", "strict_plus", "moderate", "permissive"} {
		spec := sbx(t, env, "", "spec", "--tier", tier, "-o", "-")
		if spec.code != 0 {
			t.Fatalf("spec %s: %d %s", tier, spec.code, spec.stderr)
		}
		lint := sbx(t, env, spec.stdout, "lint", "--tier", tier, "-")
		if lint.code != 0 || !strings.Contains(lint.stdout, "ok: complies") {
			t.Errorf("lint of generated %s spec: %d\n%s%s", tier, lint.code, lint.stdout, lint.stderr)
		}
	}
}

func TestLintRuncDefaultFails(t *testing.T) {
	r := sbx(t, dirs(t), "", "lint", "--tier", "strict", "../../enforce/testdata/runc-spec-default.json")
	if r.code != 5 || !strings.Contains(r.stderr, "SANDBOX_SPEC_NONCOMPLIANT") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"LINT_SECCOMP_MISSING $.linux.seccomp", "LINT_CAPABILITY $.process.capabilities.bounding[0]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("violation %q not listed:\n%s", want, r.stdout)
		}
	}
	j := sbx(t, dirs(t), "", "lint", "--tier", "strict", "--format", "json", "../../enforce/testdata/runc-spec-default.json")
	var out struct {
		Compliant  bool
		Violations []struct{ Code, Path string }
	}
	if err := json.Unmarshal([]byte(j.stdout), &out); err != nil || out.Compliant || len(out.Violations) == 0 || j.code != 5 {
		t.Errorf("json lint: %v %+v exit %d", err, out, j.code)
	}
}

func TestBindDowngradeBlockedAndAudited(t *testing.T) {
	env := dirs(t)
	if r := sbx(t, env, "", "bind", "--connector", "agent-1", "--tier", "strict"); r.code != 0 {
		t.Fatalf("initial bind: %+v", r)
	}
	r := sbx(t, env, "", "bind", "--connector", "agent-1", "--tier", "permissive")
	if r.code != 3 || !strings.HasPrefix(r.stderr, "sbxrun: SANDBOX_DOWNGRADE_BLOCKED: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("downgrade: exit %d stderr %q", r.code, r.stderr)
	}
	blocked := sbx(t, env, "", "log", "--blocked-only", "--json")
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(blocked.stdout)), &rec); err != nil {
		t.Fatalf("log --blocked-only: %v\n%s", err, blocked.stdout)
	}
	if rec["code"] != "SANDBOX_DOWNGRADE_BLOCKED" || rec["connector"] != "agent-1" || rec["result"] != "blocked" {
		t.Errorf("refusal record: %v", rec)
	}
	// With an override token the same move succeeds, once.
	tok := sbx(t, env, "", "override", "create", "--label", "ticket-9")
	token := strings.TrimSpace(tok.stdout)
	if tok.code != 0 || !strings.HasPrefix(token, "sbxo_") {
		t.Fatalf("override create: %+v", tok)
	}
	if r := sbx(t, env, "", "bind", "--connector", "agent-1", "--tier", "permissive", "--override-token", token); r.code != 0 {
		t.Fatalf("authorized bind: %+v", r)
	}
	sbx(t, env, "", "bind", "--connector", "agent-1", "--tier", "strict")
	if r := sbx(t, env, "", "bind", "--connector", "agent-1", "--tier", "permissive", "--override-token", token); r.code != 3 || !strings.Contains(r.stderr, "SANDBOX_OVERRIDE_INVALID") {
		t.Errorf("reused token: %+v", r)
	}
	all := sbx(t, env, "", "log")
	if !strings.Contains(all.stdout, "override") || !strings.Contains(all.stdout, "ticket-9") || strings.Contains(all.stdout, token) {
		t.Errorf("override not audited (or token leaked):\n%s", all.stdout)
	}
	if v := sbx(t, env, "", "log", "--verify"); v.code != 0 || !strings.HasPrefix(v.stdout, "ok: ") {
		t.Errorf("verify: %+v", v)
	}
}

func TestSpecWithConnectorHonoursBinding(t *testing.T) {
	env := dirs(t)
	sbx(t, env, "", "bind", "--connector", "ci", "--tier", "strict")
	if r := sbx(t, env, "", "spec", "--connector", "ci", "--tier", "moderate", "-o", "-"); r.code != 3 || !strings.Contains(r.stderr, "SANDBOX_DOWNGRADE_BLOCKED") {
		t.Errorf("spec looser than binding: %+v", r)
	}
	r := sbx(t, env, "", "spec", "--connector", "ci", "--format", "grants", "-o", "-")
	if r.code != 0 || !strings.Contains(r.stdout, `"tier": "strict"`) {
		t.Errorf("spec from binding: %d %s", r.code, r.stderr)
	}
}

// TestBadInput: every kind of bad input gets its stable code, a one-line
// message, its exit status, and leaves nothing behind.
func TestBadInput(t *testing.T) {
	env := dirs(t)
	stateDir := strings.TrimPrefix(env[0], "SBXRUN_STATE_DIR=")
	root := filepath.Join(t.TempDir(), "root")
	env = append(env, "SBXRUN_ROOT="+root)
	bundle := t.TempDir()
	bad := filepath.Join(bundle, "bad.yaml")
	os.WriteFile(bad, []byte("capabilities: {network_access: sometimes}\nnope: 1\n"), 0o644)
	tiny := filepath.Join(bundle, "tiny.yaml")
	os.WriteFile(tiny, []byte("limits: {memory: 1}\n"), 0o644)
	// A device node like /dev/null, but a private one: if the refusal ever
	// broke, the test must not replace the machine's /dev/null.
	devNull := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(devNull, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if err := syscall.Mkfifo(devNull, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	huge := filepath.Join(bundle, "huge.yaml")
	os.WriteFile(huge, []byte("rlimits: {RLIMIT_NOFILE: {soft: 1, hard: 1099511627776}}\n"), 0o644)
	type tc struct {
		args []string
		code int
		want string
	}
	cases := []tc{
		{[]string{"spec", "--tier", "lax", "--bundle", bundle}, 2, "SANDBOX_PROFILE_UNKNOWN"},
		{[]string{"spec", "--config", bad, "--bundle", bundle}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--format", "yaml", "--bundle", bundle}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--config", tiny, "--bundle", bundle}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--config", huge, "--bundle", bundle}, 3, "SANDBOX_POLICY_CONFLICT"},
		{[]string{"spec", "--tier", "strict", "--bundle", "/nonexistent/bundle"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--tier", "strict", "-o", devNull}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--tier", "strict", "-o", devNull, "--force"}, 2, "SANDBOX_CONFIG_INVALID"},
		// The destination is checked before the tier.
		{[]string{"spec", "--tier", "bogus", "-o", devNull}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"lint", "--tier", "strict", bad}, 2, "SANDBOX_SPEC_INVALID"},
		{[]string{"bind", "--connector", "a/b", "--tier", "strict"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--no-such-flag"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"explain", "--tier", "nope"}, 2, "SANDBOX_PROFILE_UNKNOWN"},
		{[]string{"frobnicate"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"--log-format", "xml", "list"}, 2, "SANDBOX_CONFIG_INVALID"},
	}
	// Runtime bundles that no runtime could run: refused before anything
	// is created.
	runtimeBundle := func(mutate func(map[string]any)) string {
		b := t.TempDir()
		os.Mkdir(filepath.Join(b, "rootfs"), 0o755)
		spec := map[string]any{"ociVersion": "1.2.0", "root": map[string]any{"path": "rootfs"},
			"process": map[string]any{"args": []string{"true"}, "cwd": "/"},
			"linux":   map[string]any{"namespaces": []map[string]string{{"type": "pid"}, {"type": "mount"}}}}
		mutate(spec)
		data, _ := json.Marshal(spec)
		os.WriteFile(filepath.Join(b, "config.json"), data, 0o644)
		return b
	}
	proc := func(s map[string]any) map[string]any { return s["process"].(map[string]any) }
	for name, mutate := range map[string]func(map[string]any){
		"empty args":        func(s map[string]any) { proc(s)["args"] = []string{} },
		"cwd through /proc": func(s map[string]any) { proc(s)["cwd"] = "/proc/self/fd/3" },
		"rlimit above host": func(s map[string]any) {
			proc(s)["rlimits"] = []map[string]any{{"type": "RLIMIT_NOFILE", "soft": 1, "hard": 1 << 40}}
		},
		"memory of 1 byte": func(s map[string]any) {
			s["linux"].(map[string]any)["resources"] = map[string]any{"memory": map[string]any{"limit": 1}}
		},
		"rootfs out of tree": func(s map[string]any) { s["root"] = map[string]any{"path": "escape"} },
		"no process":         func(s map[string]any) { delete(s, "process") },
	} {
		b := runtimeBundle(mutate)
		os.Symlink("/", filepath.Join(b, "escape"))
		for _, verb := range []string{"run", "create"} {
			cases = append(cases, tc{[]string{verb, "--bundle", b, "bad-" + strings.NewReplacer(" ", "-", "/", "").Replace(name)}, 2, "SANDBOX_SPEC_INVALID"})
		}
	}
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, "config.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{[]string{"create", "--bundle", fifo, "fifo"}, 2, "SANDBOX_SPEC_INVALID"})
	// An invalid id is refused the same way by every verb.
	for _, id := range []string{"../x", strings.Repeat("a", 300), "a/b", "."} {
		for _, verb := range [][]string{{"state"}, {"start"}, {"kill"}, {"delete"}, {"delete", "--force"}, {"pause"}, {"resume"},
			{"ps"}, {"events", "--stats"}, {"update", "--pids-limit", "5"}, {"exec"}, {"run", "--bundle", bundle}, {"create", "--bundle", bundle}} {
			args := append(append([]string{}, verb...), id)
			if verb[0] == "exec" {
				args = append(args, "true")
			}
			cases = append(cases, tc{args, 2, "SANDBOX_CONFIG_INVALID"})
		}
	}
	// A container that does not exist.
	for _, verb := range [][]string{{"state"}, {"start"}, {"kill"}, {"delete"}, {"pause"}, {"resume"}, {"ps"}, {"events", "--stats"},
		{"update", "--pids-limit", "5"}, {"exec", "nope", "true"}} {
		args := append([]string{}, verb...)
		if verb[0] != "exec" {
			args = append(args, "nope")
		}
		cases = append(cases, tc{args, 2, "SANDBOX_NOT_FOUND"})
	}
	for _, c := range cases {
		done := make(chan result, 1)
		go func() { done <- sbx(t, env, "", c.args...) }()
		var r result
		select {
		case r = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%v hung", c.args)
		}
		if r.code != c.code || !strings.HasPrefix(r.stderr, "sbxrun: "+c.want+": ") || !oneMessage(r.stderr) {
			t.Errorf("%v: exit %d stderr %q, want %d %s on one line (details below it)", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(bundle, "config.json")); !os.IsNotExist(err) {
		t.Errorf("a refused spec left config.json behind")
	}
	if fi, err := os.Lstat(devNull); err != nil || fi.Mode().IsRegular() {
		t.Errorf("spec wrote through the device node %s: %v", devNull, err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused runtime requests left state behind: %v", entries)
	}
	// A corrupt bindings file is untrusted state, never read as empty.
	os.MkdirAll(stateDir, 0o700)
	os.WriteFile(filepath.Join(stateDir, "bindings.json"), []byte("{not json"), 0o644)
	for _, args := range [][]string{{"bind", "--connector", "a", "--tier", "strict"}, {"spec", "--connector", "a", "-o", "-"}, {"bind"}} {
		if r := sbx(t, env, "", args...); r.code != 6 || !strings.HasPrefix(r.stderr, "sbxrun: SANDBOX_STATE_UNTRUSTED: ") {
			t.Errorf("%v with corrupt bindings: exit %d %q", args, r.code, r.stderr)
		}
	}
	j := sbx(t, env, "", "--log-format", "json", "spec", "--tier", "lax", "-o", "-")
	var e map[string]any
	if err := json.Unmarshal([]byte(j.stderr), &e); err != nil || e["code"] != "SANDBOX_PROFILE_UNKNOWN" || e["level"] != "error" {
		t.Errorf("json error: %q", j.stderr)
	}
}

// oneMessage: the error is one message line, then only "  - detail" lines.
func oneMessage(stderr string) bool {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  - ") {
			return false
		}
	}
	return strings.HasSuffix(stderr, "\n")
}

// TestOneLogger: --log-format json makes every diagnostic JSON (warnings
// included), --log sends them to a file (the final error goes to both),
// and --debug shows the decisions.
func TestOneLogger(t *testing.T) {
	env := dirs(t)
	r := sbx(t, env, "", "--log-format", "json", "spec", "--tier", "moderate", "-o", "-")
	if r.code != 0 {
		t.Fatalf("spec: %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	warned := false
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("non-JSON diagnostic with --log-format json: %q", l)
			continue
		}
		warned = warned || (m["level"] == "warning" && strings.Contains(m["msg"].(string), "process_exec=deny"))
	}
	if !warned {
		t.Errorf("no JSON warning about process_exec:\n%s", r.stderr)
	}
	text := sbx(t, env, "", "spec", "--tier", "moderate", "-o", "-")
	if !strings.Contains(text.stderr, "sbxrun: warning: not enforced by this spec alone: process_exec=deny") {
		t.Errorf("text warnings:\n%s", text.stderr)
	}
	logFile := filepath.Join(t.TempDir(), "log.json")
	r = sbx(t, env, "", "--log", logFile, "--log-format", "json", "spec", "--tier", "moderate", "-o", "-")
	data, _ := os.ReadFile(logFile)
	if r.code != 0 || r.stderr != "" || !strings.Contains(string(data), `"level":"warning"`) {
		t.Errorf("--log: stderr %q, file %q", r.stderr, data)
	}
	r = sbx(t, env, "", "--log", logFile, "--log-format", "json", "spec", "--tier", "lax", "-o", "-")
	data, _ = os.ReadFile(logFile)
	if !strings.Contains(r.stderr, `"code":"SANDBOX_PROFILE_UNKNOWN"`) || !strings.Contains(string(data), `"code":"SANDBOX_PROFILE_UNKNOWN"`) {
		t.Errorf("the final error must reach stderr and --log: %q / %q", r.stderr, data)
	}
	quiet := sbx(t, env, "", "spec", "--tier", "strict", "-o", "-")
	debug := sbx(t, env, "", "--debug", "spec", "--tier", "strict", "-o", "-")
	if strings.Contains(quiet.stderr, "debug:") || !strings.Contains(debug.stderr, "sbxrun: debug: tier selected") || !strings.Contains(debug.stderr, "from=flag") {
		t.Errorf("--debug: without %q, with %q", quiet.stderr, debug.stderr)
	}
}

func TestSpecWritesBundleOnceAndSeccompExport(t *testing.T) {
	env := dirs(t)
	bundle := t.TempDir()
	if r := sbx(t, env, "", "spec", "--tier", "strict", "--bundle", bundle, "--", "/bin/echo", "hi"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(bundle, "config.json"))
	var s struct{ Process struct{ Args []string } }
	if err := json.Unmarshal(data, &s); err != nil || strings.Join(s.Process.Args, " ") != "/bin/echo hi" {
		t.Errorf("args: %v %v", s.Process.Args, err)
	}
	if r := sbx(t, env, "", "spec", "--tier", "strict", "--bundle", bundle); r.code != 2 {
		t.Errorf("overwrote config.json without --force: %+v", r)
	}
	sc := sbx(t, env, "", "spec", "--tier", "strict", "--format", "seccomp")
	var prof struct {
		DefaultAction   string
		DefaultErrnoRet int
		Syscalls        []struct{ Names []string }
	}
	if err := json.Unmarshal([]byte(sc.stdout), &prof); err != nil || prof.DefaultAction != "SCMP_ACT_ERRNO" || prof.DefaultErrnoRet != 38 || len(prof.Syscalls) == 0 {
		t.Errorf("seccomp export: %v %+v", err, prof)
	}
}

func TestSeatbeltProfileLintsClean(t *testing.T) {
	env := dirs(t)
	project := t.TempDir()
	for _, tier := range []string{"strict", "strict_plus", "moderate", "permissive"} {
		r := sbx(t, env, "", "seatbelt", "--tier", tier, "--preset", "agent", "--project", project, "--tag", "t1", "--format", "json", "--", "/bin/sh")
		var p struct {
			Profile string
			Params  []struct{ Name, Value string }
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &p) != nil || !strings.HasPrefix(p.Profile, "(version 1)") {
			t.Fatalf("%s: %d %s", tier, r.code, r.stderr)
		}
		file := filepath.Join(t.TempDir(), "p.sb")
		os.WriteFile(file, []byte(p.Profile), 0o644)
		args := []string{"seatbelt", "lint"}
		for _, d := range p.Params {
			args = append(args, "-D", d.Name+"="+d.Value)
		}
		if l := sbx(t, env, "", append(args, file)...); l.code != 0 {
			t.Errorf("%s: generated profile does not lint clean:\n%s", tier, l.stdout)
		}
		// Without its parameters the same profile would fail to load: lint says so.
		if l := sbx(t, env, "", "seatbelt", "lint", file); l.code != 5 || !strings.Contains(l.stdout, "param-undefined") {
			t.Errorf("%s: missing params not caught: %d %s", tier, l.code, l.stdout)
		}
	}
	if r := sbx(t, env, "", "seatbelt", "run", "--tier", "strict", "--", "/bin/true"); r.code == 0 || !strings.Contains(r.stderr, "darwin") {
		t.Errorf("seatbelt run off darwin must fail closed: %+v", r)
	}
}

func TestHookRecordsLifecycle(t *testing.T) {
	env := dirs(t)
	state := `{"ociVersion":"1.2.0","id":"c9","status":"stopped","pid":0,"bundle":"/b","annotations":{"dev.sbx.tier":"moderate"}}`
	if r := sbx(t, env, state, "hook", "poststop"); r.code != 0 {
		t.Fatalf("hook: %+v", r)
	}
	if r := sbx(t, env, "not json", "hook", "poststop"); r.code != 2 || !strings.Contains(r.stderr, "SANDBOX_SPEC_INVALID") {
		t.Errorf("bad state: %+v", r)
	}
	log := sbx(t, env, "", "log", "--json")
	if !strings.Contains(log.stdout, `"operation":"poststop"`) || !strings.Contains(log.stdout, `"target":"c9"`) || !strings.Contains(log.stdout, `"tier":"moderate"`) {
		t.Errorf("lifecycle record missing:\n%s", log.stdout)
	}
}

// TestHelpIsTrue: the seatbelt verbs (macOS profiles) do not offer the
// Linux-only host flags that spec and lint have; no verb's help names a
// tier that is not in the catalog.
func TestHelpIsTrue(t *testing.T) {
	env := dirs(t)
	for _, args := range [][]string{{"seatbelt", "--help"}, {"seatbelt", "run", "--help"}} {
		h := sbx(t, env, "", args...)
		for _, linux := range []string{"--rootless", "--arch", "--reference-host"} {
			if strings.Contains(h.stdout, linux) {
				t.Errorf("%v offers the Linux-only %s:\n%s", args, linux, h.stdout)
			}
		}
		if !strings.Contains(h.stdout, "--tier") || !strings.Contains(h.stdout, "--preset") {
			t.Errorf("%v lacks its own flags:\n%s", args, h.stdout)
		}
	}
	if h := sbx(t, env, "", "spec", "--help"); !strings.Contains(h.stdout, "--rootless") || !strings.Contains(h.stdout, "strict, strict_plus, moderate, permissive") {
		t.Errorf("spec --help:\n%s", h.stdout)
	}
	if h := sbx(t, env, "", "exec", "--help"); !strings.Contains(h.stdout, "CONTAINER-ID [COMMAND ARGS...]") {
		t.Errorf("exec --help must say the id comes before the command:\n%s", h.stdout)
	}
}
