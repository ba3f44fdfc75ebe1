package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// sbx is one private sbxrun installation: state root, state dir, config dir.
type sbx struct {
	t                         *testing.T
	root, stateDir, configDir string
}

func newSbx(t *testing.T) *sbx {
	d := t.TempDir()
	os.Chmod(d, 0o755)
	s := &sbx{t: t, root: filepath.Join(d, "root"), stateDir: filepath.Join(d, "state"), configDir: filepath.Join(d, "conf")}
	t.Cleanup(func() {
		// Whatever a test left running is a failure of that test, but
		// never a leak into the next one.
		out, _ := s.cmd("list", "-q").Output()
		for _, id := range strings.Fields(string(out)) {
			s.cmd("delete", "--force", id).Run()
		}
	})
	return s
}

func (s *sbx) cmd(args ...string) *exec.Cmd {
	full := append([]string{"--root", s.root, "--state-dir", s.stateDir, "--config-dir", s.configDir}, args...)
	return exec.Command(sbxrunBin, full...)
}

type out struct {
	stdout, stderr string
	code           int
}

func (s *sbx) run(stdin string, args ...string) out {
	s.t.Helper()
	c := s.cmd(args...)
	c.Stdin = strings.NewReader(stdin)
	return runCmd(s.t, c, 0)
}

// runCmd runs c to completion (or kills it after timeout, if non-zero)
// and returns its output and exit code. Output goes to files, not pipes: a
// detached container inherits the runtime's stdio, and a pipe would keep
// Wait waiting for EOF until the container exits.
func runCmd(t *testing.T, c *exec.Cmd, timeout time.Duration) out {
	t.Helper()
	o, e := tempFile(t), tempFile(t)
	c.Stdout, c.Stderr = o, e
	if err := c.Start(); err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	if timeout == 0 {
		err = <-done
	} else {
		select {
		case err = <-done:
		case <-time.After(timeout):
			c.Process.Kill()
			<-done
			t.Fatalf("%v timed out\nstdout: %s\nstderr: %s", c.Args, readBack(o), readBack(e))
		}
	}
	r := out{readBack(o), readBack(e), 0}
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		r.code = xe.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func tempFile(t *testing.T) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readBack(f *os.File) string {
	data, _ := os.ReadFile(f.Name())
	return string(data)
}

func (s *sbx) must(args ...string) string {
	s.t.Helper()
	r := s.run("", args...)
	if r.code != 0 {
		s.t.Fatalf("sbxrun %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// updateResources runs `update --resources` with res as the JSON file.
func (s *sbx) updateResources(id, res string) out {
	s.t.Helper()
	f := filepath.Join(s.t.TempDir(), "r.json")
	if err := os.WriteFile(f, []byte(res), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return s.run("", "update", "--resources", f, id)
}

func (s *sbx) state(id string) map[string]any {
	s.t.Helper()
	var st map[string]any
	if err := json.Unmarshal([]byte(s.must("state", id)), &st); err != nil {
		s.t.Fatal(err)
	}
	return st
}

// bundle writes spec into a new bundle whose rootfs is the shared one.
func bundle(t *testing.T, spec *specs.Spec) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	spec.Root.Path = rootfs
	data, err := json.MarshalIndent(spec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// plainSpec is `runc spec`'s default with args: a spec sbxrun knows nothing
// about (no annotations).
func plainSpec(t *testing.T, args ...string) *specs.Spec {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("runc", "spec", "--bundle", dir).CombinedOutput(); err != nil {
		t.Fatalf("runc spec: %v %s", err, out)
	}
	var s specs.Spec
	data, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s.Process.Terminal = false
	s.Process.Args = args
	// The VM forbids raising hard limits; runc spec asks for NOFILE 1024.
	return &s
}

func annotate(s *specs.Spec, kv ...string) *specs.Spec {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Annotations[kv[i]] = kv[i+1]
	}
	return s
}

// pidAlive: the process exists and is not a zombie (a killed container
// init is reparented to the host's init, which reaps it in its own time).
func pidAlive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func TestRuntimeLifecycle(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "moderate", nil)
	spec.Process.Args = []string{"sleep", "300"}
	b := bundle(t, spec)
	pidFile := filepath.Join(t.TempDir(), "pid")
	s.must("create", "--bundle", b, "--pid-file", pidFile, "lc")
	st := s.state("lc")
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(string(data))
	if st["status"] != "created" || int(st["pid"].(float64)) != pid || st["bundle"] != b {
		t.Fatalf("after create: %v (pid file %q)", st, data)
	}
	if st["annotations"].(map[string]any)["dev.sbx.tier"] != "moderate" {
		t.Errorf("tier annotation not in state: %v", st["annotations"])
	}
	s.must("start", "lc")
	if st := s.state("lc"); st["status"] != "running" {
		t.Fatalf("after start: %v", st["status"])
	}
	if got := s.must("exec", "lc", "sh", "-c", "echo exec-ok; id -u"); got != "exec-ok\n0\n" {
		t.Errorf("exec output %q", got)
	}
	if r := s.run("", "exec", "lc", "sh", "-c", "exit 3"); r.code != 3 {
		t.Errorf("exec exit status %d, want 3", r.code)
	}
	var pids []int
	json.Unmarshal([]byte(s.must("ps", "--format", "json", "lc")), &pids)
	if len(pids) != 1 || pids[0] != pid {
		t.Errorf("ps = %v, want [%d]", pids, pid)
	}
	if table := s.must("ps", "lc"); !strings.Contains(table, "sleep 300") {
		t.Errorf("ps table:\n%s", table)
	}
	s.must("pause", "lc")
	if st := s.state("lc"); st["status"] != "paused" {
		t.Errorf("after pause: %v", st["status"])
	}
	s.must("resume", "lc")
	// runc's types.Event: data.memory.usage.limit, data.pids.current/limit.
	var ev struct {
		Type string
		Data struct {
			Memory struct{ Usage struct{ Limit uint64 } }
			Pids   struct{ Current, Limit uint64 }
		}
	}
	if err := json.Unmarshal([]byte(s.must("events", "--stats", "lc")), &ev); err != nil || ev.Type != "stats" || ev.Data.Memory.Usage.Limit != 1<<30 || ev.Data.Pids.Limit != 512 || ev.Data.Pids.Current != 1 {
		t.Errorf("events --stats: %v %+v", err, ev)
	}
	s.must("update", "--pids-limit", "100", "lc")
	json.Unmarshal([]byte(s.must("events", "--stats", "lc")), &ev)
	if ev.Data.Pids.Limit != 100 {
		t.Errorf("update --pids-limit: limit %d", ev.Data.Pids.Limit)
	}
	if r := s.run("", "update", "--memory", strconv.Itoa(2<<30), "lc"); r.code == 0 || !strings.Contains(r.stderr, "SANDBOX_POLICY_CONFLICT") {
		t.Errorf("update above the tier accepted: %+v", r)
	}
	if r := s.run("", "update", "--cpu-quota", "300000", "--cpu-period", "100000", "lc"); r.code == 0 || !strings.Contains(r.stderr, "cpu quota") {
		t.Errorf("cpu above the tier accepted: %+v", r)
	}
	s.must("update", "--cpu-quota", "50000", "--cpu-period", "100000", "lc")
	if list := s.must("list", "--format", "json"); !strings.Contains(list, `"id": "lc"`) {
		t.Errorf("list: %s", list)
	}
	if r := s.run("", "delete", "lc"); r.code == 0 {
		t.Error("delete of a running container succeeded without --force")
	}
	s.must("kill", "lc", "KILL")
	waitStatus(t, s, "lc", "stopped")
	s.must("delete", "lc")
	if pidAlive(pid) {
		t.Errorf("init %d still alive after delete", pid)
	}
	if _, err := os.Stat(filepath.Join(s.root, "lc")); !os.IsNotExist(err) {
		t.Errorf("state dir left behind: %v", err)
	}
	if r := s.run("", "state", "lc"); r.code == 0 {
		t.Error("state of a deleted container succeeded")
	}
}

func waitStatus(t *testing.T, s *sbx, id, want string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if s.state(id)["status"] == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never reached %s", id, want)
}

func TestRunExitStatusAndStdio(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sh", "-c", "read x; echo got-$x; echo err >&2; exit 7"}
	r := s.run("hello\n", "run", "--bundle", bundle(t, spec), "ex")
	if r.code != 7 || r.stdout != "got-hello\n" || !strings.Contains(r.stderr, "err") {
		t.Errorf("run: %+v", r)
	}
	// A signal from outside: run's status is 128+signal.
	spec.Process.Args = []string{"sleep", "300"}
	done := make(chan out, 1)
	go func() { done <- s.run("", "run", "--bundle", bundle(t, spec), "sig") }()
	for i := 0; i < 200 && s.run("", "state", "sig").code != 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	s.must("kill", "sig", "9")
	if r := <-done; r.code != 137 {
		t.Errorf("killed by SIGKILL: exit %d, want 137", r.code)
	}
	if list := s.must("list", "-q"); list != "" {
		t.Errorf("run left containers: %q", list)
	}
}

func TestDeleteForceCleansAll(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, spec), "df")
	pid := int(s.state("df")["pid"].(float64))
	cg := cgroupOf(t, pid, "memory")
	s.must("delete", "--force", "df")
	if pidAlive(pid) {
		t.Error("process survived delete --force")
	}
	if _, err := os.Stat(cg); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind (%v)", cg, err)
	}
	// Deleting what does not exist: --force succeeds, plain delete fails.
	if r := s.run("", "delete", "--force", "df"); r.code != 0 {
		t.Errorf("delete --force of a missing container: %+v", r)
	}
	if r := s.run("", "delete", "df"); r.code == 0 {
		t.Error("delete of a missing container succeeded")
	}
}

func readCgroupFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// cgroupOf returns the host path of pid's cgroup for a v1 controller.
func cgroupOf(t *testing.T, pid int, ctrl string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ","+ctrl+",") {
			p := filepath.Join("/sys/fs/cgroup", ctrl, parts[2])
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("cgroup %s: %v", p, err)
			}
			return p
		}
	}
	t.Fatalf("no %s cgroup for %d", ctrl, pid)
	return ""
}

func TestAnnotationSelectsTier(t *testing.T) {
	s := newSbx(t)
	// Without annotation the spec runs as given (plain runc behaviour).
	plain := plainSpec(t, "/probe")
	r := probeVia(t, s, plain)
	if r["cap_eff"] == "0000000000000000" || r["seccomp"] != "0" {
		t.Errorf("unannotated spec was altered: cap_eff=%v seccomp=%v", r["cap_eff"], r["seccomp"])
	}
	strict := probeVia(t, s, annotate(plainSpec(t, "/probe"), "dev.sbx.tier", "strict"))
	strict.expect(t, map[string]string{"seccomp": "2", "cap_eff": "0000000000000000", "uid": "65534",
		"rootfs_write": "EROFS", "keyctl": "EPERM", "mount": "EPERM", "proc_masked": "EMPTY"})
	log := s.must("log", "--json")
	if !strings.Contains(log, `"policy":"tier:strict"`) || !strings.Contains(log, "process.capabilities: dropped") {
		t.Errorf("enforcement not audited with its changes:\n%s", log)
	}
}

func probeVia(t *testing.T, s *sbx, spec *specs.Spec) report {
	t.Helper()
	id := fmt.Sprintf("p%d", seq.Add(1))
	got := s.must("run", "--bundle", bundle(t, spec), id)
	var r report
	if err := json.Unmarshal([]byte(got), &r); err != nil {
		t.Fatalf("probe output: %v\n%s", err, got)
	}
	return r
}

func TestDefaultTierFromSystemConfig(t *testing.T) {
	s := newSbx(t)
	os.MkdirAll(s.configDir, 0o755)
	os.WriteFile(filepath.Join(s.configDir, "runtime.yaml"), []byte("default_tier: strict\n"), 0o644)
	probeVia(t, s, plainSpec(t, "/probe")).expect(t, map[string]string{"seccomp": "2", "uid": "65534"})
	os.WriteFile(filepath.Join(s.configDir, "runtime.yaml"), []byte("default_tier: lax\n"), 0o644)
	if r := s.run("", "run", "--bundle", bundle(t, plainSpec(t, "true")), "bad"); r.code == 0 || !strings.Contains(r.stderr, "SANDBOX_PROFILE_UNKNOWN") {
		t.Errorf("bad default tier: %+v", r)
	}
}

// Each refusal is paired with the accepted variant of the same spec, and a
// refusal leaves no container, state directory or process behind.
func TestEnforcementRefusals(t *testing.T) {
	s := newSbx(t)
	cases := []struct {
		name   string
		mutate func(*specs.Spec)
		want   string
	}{
		{"host network under strict", func(sp *specs.Spec) { dropNS(sp, specs.NetworkNamespace) }, "shares the host network namespace"},
		{"host pid under strict", func(sp *specs.Spec) { dropNS(sp, specs.PIDNamespace) }, "shares the host pid namespace"},
		{"engine socket mount", func(sp *specs.Spec) {
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/sock", Type: "bind", Source: "/run/containerd/containerd.sock", Options: []string{"rbind", "ro"}})
		}, "no tier may mount"},
		{"host path mount", func(sp *specs.Spec) {
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/h", Type: "bind", Source: "/home", Options: []string{"rbind", "ro"}})
		}, "not granted by tier strict"},
		{"writable sysfs is replaced, shared propagation is not", func(sp *specs.Spec) {
			sp.Mounts = append(sp.Mounts, specs.Mount{Destination: "/data", Type: "tmpfs", Source: "tmpfs", Options: []string{"rshared"}})
		}, "shared propagation"},
		{"extra device", func(sp *specs.Spec) {
			sp.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/kmsg", Type: "c", Major: 1, Minor: 11}}
		}, "device /dev/kmsg"},
		{"hooks", func(sp *specs.Spec) { sp.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/true"}}} }, "hooks"},
		{"host sysctl", func(sp *specs.Spec) { sp.Linux.Sysctl = map[string]string{"kernel.panic": "1"} }, "kernel.panic"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok := annotate(plainSpec(t, "true"), "dev.sbx.tier", "strict")
			if r := s.run("", "run", "--bundle", bundle(t, ok), "accept"); r.code != 0 {
				t.Fatalf("accepted variant failed: %+v", r)
			}
			bad := annotate(plainSpec(t, "true"), "dev.sbx.tier", "strict")
			tc.mutate(bad)
			r := s.run("", "run", "--bundle", bundle(t, bad), "refuse")
			if r.code == 0 || !strings.Contains(r.stderr, "SANDBOX_SPEC_NONCOMPLIANT") || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "$.") {
				t.Fatalf("refusal: exit %d\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(s.root, "refuse")); !os.IsNotExist(err) {
				t.Errorf("refusal left state behind")
			}
		})
	}
	if blocked := s.must("log", "--blocked-only"); strings.Count(blocked, "SANDBOX_SPEC_NONCOMPLIANT") != len(cases) {
		t.Errorf("refusals not audited:\n%s", blocked)
	}
}

func dropNS(s *specs.Spec, t specs.LinuxNamespaceType) {
	var keep []specs.LinuxNamespace
	for _, ns := range s.Linux.Namespaces {
		if ns.Type != t {
			keep = append(keep, ns)
		}
	}
	s.Linux.Namespaces = keep
}

func TestConnectorBindingBlocksDowngrade(t *testing.T) {
	s := newSbx(t)
	s.must("bind", "--connector", "agent-7", "--tier", "strict")
	loose := annotate(plainSpec(t, "true"), "dev.sbx.tier", "permissive", "dev.sbx.connector", "agent-7")
	if r := s.run("", "run", "--bundle", bundle(t, loose), "loose"); r.code == 0 || !strings.Contains(r.stderr, "SANDBOX_DOWNGRADE_BLOCKED") {
		t.Errorf("downgrade by annotation: %+v", r)
	}
	// The connector alone selects its bound tier.
	bound := annotate(plainSpec(t, "/probe"), "dev.sbx.connector", "agent-7")
	probeVia(t, s, bound).expect(t, map[string]string{"seccomp": "2", "uid": "65534"})
}

func TestExecFollowsTier(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, spec), "ex")
	proc := specs.Process{Args: []string{"sh", "-c", "id -u; echo ${GITHUB_TOKEN:-none}; grep CapEff /proc/self/status"}, Cwd: "/",
		Env:          []string{"PATH=/bin", "GITHUB_TOKEN=ghp_x"},
		Capabilities: &specs.LinuxCapabilities{Bounding: []string{"CAP_SYS_ADMIN"}, Effective: []string{"CAP_SYS_ADMIN"}, Permitted: []string{"CAP_SYS_ADMIN"}}}
	pf := filepath.Join(t.TempDir(), "p.json")
	data, _ := json.Marshal(proc)
	os.WriteFile(pf, data, 0o644)
	got := s.must("exec", "--process", pf, "ex")
	if got != "65534\nnone\nCapEff:\t0000000000000000\n" {
		t.Errorf("exec under strict: %q", got)
	}
}

func TestFeatures(t *testing.T) {
	s := newSbx(t)
	var f struct {
		OCIVersionMax string
		Linux         struct {
			Seccomp struct{ Enabled bool }
			Cgroup  struct{ Systemd bool }
		}
		Annotations map[string]string
	}
	if err := json.Unmarshal([]byte(s.must("features")), &f); err != nil {
		t.Fatal(err)
	}
	if !f.Linux.Seccomp.Enabled || f.Linux.Cgroup.Systemd || f.Annotations["dev.sbx.tiers"] != "strict,strict_plus,moderate,permissive" {
		t.Errorf("features: %+v", f)
	}
	if r := s.run("", "--systemd-cgroup", "list"); r.code == 0 || !strings.Contains(r.stderr, "--systemd-cgroup is not supported") {
		t.Errorf("--systemd-cgroup accepted: %+v", r)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", " ") }

// TestExecDeniedUnderStrict: the sbxrun runtime enforces
// process_exec=deny (Landlock exec shim): the initial program runs, a
// second program cannot be executed, in the init and in `exec` alike.
// Paired: permissive executes it. Each run's report is parsed on its own.
func TestExecDeniedUnderStrict(t *testing.T) {
	s := newSbx(t)
	parse := func(what, out string) report {
		t.Helper()
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil || len(r) == 0 {
			t.Fatalf("%s: probe output is not a report: %v\n%s", what, err, out)
		}
		return r
	}
	strict := compile(t, "strict", nil)
	strict.Process.Args = []string{"/probe"}
	parse("strict init", s.must("run", "--bundle", bundle(t, strict), "x1")).
		expect(t, map[string]string{"exec": "EACCES", "seccomp": "2", "uid": "65534"})
	perm := compile(t, "permissive", nil)
	perm.Process.Args = []string{"/probe"}
	parse("permissive init", s.must("run", "--bundle", bundle(t, perm), "x2")).
		expect(t, map[string]string{"exec": "OK"})
	strict.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, strict), "x3")
	parse("strict exec", s.must("exec", "x3", "/probe")).expect(t, map[string]string{"exec": "EACCES", "uid": "65534"})
	perm.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, perm), "x4")
	parse("permissive exec", s.must("exec", "x4", "/probe")).expect(t, map[string]string{"exec": "OK"})
	if log := s.must("log", "--json"); !strings.Contains(log, "enforced by the Landlock exec shim") {
		t.Errorf("exec enforcement not audited:\n%s", log)
	}
}
