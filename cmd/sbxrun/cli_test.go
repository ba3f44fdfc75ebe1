package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

func TestBadInput(t *testing.T) {
	env := dirs(t)
	bundle := t.TempDir()
	bad := filepath.Join(bundle, "bad.yaml")
	os.WriteFile(bad, []byte("capabilities: {network_access: sometimes}\nnope: 1\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"spec", "--tier", "lax", "--bundle", bundle}, 2, "SANDBOX_PROFILE_UNKNOWN"},
		{[]string{"spec", "--config", bad, "--bundle", bundle}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--format", "yaml", "--bundle", bundle}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"lint", "--tier", "strict", bad}, 2, "SANDBOX_SPEC_INVALID"},
		{[]string{"bind", "--connector", "a/b", "--tier", "strict"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"spec", "--no-such-flag"}, 2, "SANDBOX_CONFIG_INVALID"},
		{[]string{"explain", "--tier", "nope"}, 2, "SANDBOX_PROFILE_UNKNOWN"},
	}
	for _, tc := range cases {
		r := sbx(t, env, "", tc.args...)
		if r.code != tc.code || !strings.HasPrefix(r.stderr, "sbxrun: "+tc.want+": ") {
			t.Errorf("%v: exit %d stderr %q, want %d %s", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(bundle, "config.json")); !os.IsNotExist(err) {
		t.Errorf("a refused spec left config.json behind")
	}
	j := sbx(t, env, "", "--log-format", "json", "spec", "--tier", "lax", "-o", "-")
	var e map[string]any
	if err := json.Unmarshal([]byte(j.stderr), &e); err != nil || e["code"] != "SANDBOX_PROFILE_UNKNOWN" {
		t.Errorf("json error: %q", j.stderr)
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
