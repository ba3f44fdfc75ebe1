package seatbelt

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// fakeTool writes a shell script standing in for sandbox-exec.
func fakeTool(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sandbox-exec")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeFailsClosed covers pitfalls 9 and 11 of the notes: the probe
// runs first, and a missing tool, a nested sandbox or a rejected profile
// is an error, never a reason to run without the sandbox.
func TestProbeFailsClosed(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		tool string
		want error
	}{
		"11 missing tool":               {filepath.Join(t.TempDir(), "absent"), ErrNoSandboxExec},
		"9 already sandboxed":           {fakeTool(t, `echo "sandbox-exec: sandbox_apply: Operation not permitted" >&2; exit 71`), ErrAlreadySandboxed},
		"11 profile rejected (exit 65)": {fakeTool(t, `echo "sandbox-exec: unbound variable" >&2; exit 65`), ErrProfileRejected},
		"11 apply failed (exit 71)":     {fakeTool(t, `echo "sandbox-exec: sandbox_apply: Invalid argument" >&2; exit 71`), ErrNotApplied},
		"11 any other failure":          {fakeTool(t, `exit 3`), ErrNotApplied},
	} {
		if err := probe(ctx, c.tool, "/bin/true"); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if err := probe(ctx, fakeTool(t, `[ "$1" = -p ] && [ "$2" = "(version 1)(allow default)" ] && exec "$3"`), "/bin/true"); err != nil {
		t.Errorf("a working sandbox-exec: %v", err)
	}
}

func exitError(t *testing.T, code string) error {
	t.Helper()
	err := exec.Command("/bin/sh", "-c", "exit "+code).Run()
	if err == nil {
		t.Fatal("no exit error")
	}
	return err
}

// TestRunErrorTellsSandboxFromCommand: exit 65 or 71 is sandbox-exec's
// failure only when its own message comes first; otherwise it is the
// command's exit status and is returned as such.
func TestRunErrorTellsSandboxFromCommand(t *testing.T) {
	if err := runError(exitError(t, "71"), []byte("sandbox-exec: sandbox_apply: Operation not permitted\n")); !errors.Is(err, ErrAlreadySandboxed) {
		t.Errorf("nested sandbox: %v", err)
	}
	if err := runError(exitError(t, "65"), []byte("sandbox-exec: syntax error\n")); !errors.Is(err, ErrProfileRejected) {
		t.Errorf("rejected profile: %v", err)
	}
	var ee *exec.ExitError
	if err := runError(exitError(t, "71"), []byte("my tool failed\n")); !errors.As(err, &ee) || ee.ExitCode() != 71 {
		t.Errorf("the command's own exit 71: %v", err)
	}
	if err := runError(exitError(t, "1"), []byte("sandbox-exec: something\n")); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit 1: %v", err)
	}
	if runError(nil, nil) != nil {
		t.Error("success became an error")
	}
}

func TestHeadWriter(t *testing.T) {
	h := &headWriter{}
	big := make([]byte, stderrHead+100)
	if n, err := h.Write([]byte("sandbox-exec: x")); n != 15 || err != nil {
		t.Fatal(n, err)
	}
	h.Write(big)
	if len(h.head) != stderrHead || string(h.head[:15]) != "sandbox-exec: x" {
		t.Fatalf("head %d bytes", len(h.head))
	}
}

func TestCommand(t *testing.T) {
	p := generate(t, "moderate", nil, withOpts(PresetAgent, nil))
	c, err := command(context.Background(), p, nil, Stdio{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != SandboxExec || !slices.Equal(c.Args, p.Argv(nil)) {
		t.Errorf("path %q args %q", c.Path, c.Args)
	}
	if c.Env == nil || len(c.Env) != 0 || c.Dir != p.Dir || !c.SysProcAttr.Setsid {
		t.Errorf("env %v dir %q setsid %v", c.Env, c.Dir, c.SysProcAttr.Setsid)
	}
	term := generate(t, "moderate", nil, withOpts(PresetNone, nil))
	term.Terminal = true
	if c, _ := command(context.Background(), term, nil, Stdio{}); c.SysProcAttr.Setsid {
		t.Error("a terminal run lost its session")
	}
}

func TestCommandRefuses(t *testing.T) {
	good := generate(t, "moderate", nil, withOpts(PresetNone, nil))
	tampered := *good
	tampered.Text += "(allow default)\n"
	unparam := *good
	unparam.Params = good.Params[1:]
	for name, c := range map[string]struct {
		p   *Profile
		cmd []string
	}{
		"nil profile":       {nil, nil},
		"tampered text":     {&tampered, nil},
		"missing parameter": {&unparam, nil},
		"program with =":    {good, []string{"A=b", "x"}},
		"empty program":     {good, []string{""}},
	} {
		if _, err := command(context.Background(), c.p, c.cmd, Stdio{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMakeScratch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	p := &Profile{Params: []Param{{ParamRunTmp, dir}}}
	cleanup, err := makeScratch(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%v %v", fi, err)
	}
	if _, err := makeScratch(p); err == nil {
		t.Error("an existing scratch directory was reused")
	}
	cleanup()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("not removed: %v", err)
	}
}

func TestMonitor(t *testing.T) {
	m, err := startMonitor(context.Background(), []string{"/bin/cat", "testdata/log-stream.ndjson"}, Filter{Tag: "sbxrun-test"})
	if err != nil {
		t.Fatal(err)
	}
	<-m.done // cat ends by itself; log stream runs until Stop
	got, dropped, err := m.Stop()
	if err != nil || dropped != 0 || len(got) != 3 || got[0].PID != 4242 {
		t.Fatalf("%v %d %v", got, dropped, err)
	}
	if _, err := startMonitor(context.Background(), []string{"/bin/cat"}, Filter{}); err == nil {
		t.Error("a filter that selects nothing was accepted")
	}
	if _, err := startMonitor(context.Background(), []string{"/nonexistent/log"}, Filter{Tag: "x"}); err == nil {
		t.Error("a missing log tool was accepted")
	}
}

func TestMonitorCap(t *testing.T) {
	m := &Monitor{}
	for i := 0; i < maxViolations+5; i++ {
		m.add(Violation{PID: i})
	}
	if len(m.recs) != maxViolations || m.dropped != 5 {
		t.Fatalf("kept %d, dropped %d", len(m.recs), m.dropped)
	}
}
