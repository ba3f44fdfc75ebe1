package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// engineRun runs an engine command and returns stdout, stderr and the exit
// code, failing the test only if it cannot be started or times out.
func engineRun(t *testing.T, env []string, timeout time.Duration, name string, args ...string) out {
	t.Helper()
	c := exec.Command(name, args...)
	c.Env = append(os.Environ(), env...)
	return runCmd(t, c, timeout)
}

// podman is podman with private storage, driving the sbxrun under test
// with private sbxrun state.
type podman struct {
	t    *testing.T
	args []string
	sbx  *sbx
}

func newPodman(t *testing.T) *podman {
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv("SBXRUN_REQUIRE_ROOT") == "1" {
			t.Fatal("podman not installed")
		}
		t.Skip("podman not installed")
	}
	// podman refuses a runroot longer than 50 bytes: t.TempDir is too long.
	d, err := os.MkdirTemp("/tmp", "pm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	s := newSbx(t)
	p := &podman{t: t, sbx: s, args: []string{
		"--root", filepath.Join(d, "storage"), "--runroot", filepath.Join(d, "run"), "--storage-driver", "vfs",
		"--runtime", sbxrunBin,
		"--runtime-flag", "state-dir=" + s.stateDir, "--runtime-flag", "config-dir=" + s.configDir,
	}}
	t.Cleanup(func() {
		exec.Command("podman", append(p.args, "rm", "-af", "-t", "0")...).Run()
		exec.Command("podman", append(p.args, "system", "reset", "-f")...).Run()
	})
	tar := filepath.Join(d, "rootfs.tar")
	if out, err := exec.Command("tar", "-C", rootfs, "-cf", tar, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	if r := p.run("import", tar, "localhost/sbxtest:latest"); r.code != 0 {
		t.Fatalf("podman import: %+v", r)
	}
	return p
}

func (p *podman) run(args ...string) out {
	p.t.Helper()
	return engineRun(p.t, nil, 90*time.Second, "podman", append(append([]string{}, p.args...), args...)...)
}

// The VM forbids raising hard rlimits; podman's defaults ask for more.
var ulimits = []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}

func (p *podman) container(args ...string) out {
	p.t.Helper()
	full := append([]string{"run"}, ulimits...)
	return p.run(append(full, args...)...)
}

func TestPodmanRunsSbxrun(t *testing.T) {
	p := newPodman(t)
	img := "localhost/sbxtest:latest"
	if r := p.container("--rm", img, "sh", "-c", "echo hello; exit 3"); r.code != 3 || r.stdout != "hello\n" {
		t.Errorf("run --rm: %+v", r)
	}
	r := p.container("-d", img, "sh", "-c", "echo started; exec sleep 300")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || id == "" {
		t.Fatalf("run -d: %+v", r)
	}
	if r := p.run("exec", id, "sh", "-c", "echo in-exec"); r.code != 0 || r.stdout != "in-exec\n" {
		t.Errorf("exec: %+v", r)
	}
	if r := p.run("logs", id); !strings.Contains(r.stdout, "started") {
		t.Errorf("logs: %+v", r)
	}
	if r := p.run("stop", "-t", "1", id); r.code != 0 {
		t.Errorf("stop: %+v", r)
	}
	if r := p.run("rm", id); r.code != 0 {
		t.Errorf("rm: %+v", r)
	}
	if r := p.container("--rm", "-t", img, "tty"); r.code != 0 || !strings.HasPrefix(r.stdout, "/dev/pts/") {
		t.Errorf("run -t: %+v", r)
	}
	if list := p.sbx.must("--root", "/run/runc", "list", "-q"); strings.Contains(list, id) {
		t.Errorf("container %s left in the runtime", id)
	}
}

func TestPodmanAnnotationTierIsEnforced(t *testing.T) {
	p := newPodman(t)
	img := "localhost/sbxtest:latest"
	probeJSON := func(args ...string) report {
		t.Helper()
		r := p.container(append(append([]string{"--rm"}, args...), img, "/probe")...)
		var rep report
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
			t.Fatalf("podman run /probe %v: %+v", args, r)
		}
		return rep
	}
	strict := probeJSON("--annotation", "dev.sbx.tier=strict")
	strict.expect(t, map[string]string{"uid": "65534", "interfaces": "[lo]", "cap_eff": "0000000000000000",
		"keyctl": "EPERM", "mount": "EPERM", "rootfs_write": "EROFS", "seccomp": "2"})
	// Paired: the same image without the annotation runs as podman asked.
	plain := probeJSON()
	if plain["uid"] != float64(0) || len(plain["interfaces"].([]any)) < 2 {
		t.Errorf("unannotated podman container should be root with podman's network: uid=%v interfaces=%v", plain["uid"], plain["interfaces"])
	}
	// A refused spec: podman shows sbxrun's error and code.
	r := p.container("--rm", "--annotation", "dev.sbx.tier=strict", "-v", "/var/run:/hostrun", img, "true")
	if r.code == 0 || !strings.Contains(r.stderr, "SANDBOX_SPEC_NONCOMPLIANT") || !strings.Contains(r.stderr, "docker.sock") {
		t.Errorf("refused spec: %+v", r)
	}
	if log := p.sbx.must("log", "--json"); !strings.Contains(log, `"tier":"strict"`) || !strings.Contains(log, `"result":"blocked"`) {
		t.Errorf("podman runs not audited:\n%s", log)
	}
}

// hasField reports whether some whitespace-separated field of out is f.
func hasField(out, f string) bool {
	for _, x := range strings.Fields(out) {
		if x == f {
			return true
		}
	}
	return false
}

// containerd on a private socket and root, driving sbxrun through the
// stock runc v2 shim (--runc-binary).
type containerd struct {
	t    *testing.T
	sock string
	cmd  *exec.Cmd
	sbx  *sbx
}

func newContainerd(t *testing.T) *containerd {
	if _, err := exec.LookPath("containerd"); err != nil {
		if os.Getenv("SBXRUN_REQUIRE_ROOT") == "1" {
			t.Fatal("containerd not installed")
		}
		t.Skip("containerd not installed")
	}
	d := t.TempDir()
	s := newSbx(t)
	c := &containerd{t: t, sock: filepath.Join(d, "containerd.sock"), sbx: s}
	cfg := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n[ttrpc]\n  address = %q\n",
		filepath.Join(d, "root"), filepath.Join(d, "state"), c.sock, c.sock+".ttrpc")
	cfgPath := filepath.Join(d, "config.toml")
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	c.cmd = exec.Command("containerd", "--config", cfgPath)
	c.cmd.Env = append(os.Environ(), "SBXRUN_STATE_DIR="+s.stateDir, "SBXRUN_CONFIG_DIR="+s.configDir)
	logf := tempFile(t)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	})
	for i := 0; i < 200; i++ {
		if r := engineRun(t, nil, 10*time.Second, "ctr", "--address", c.sock, "version"); r.code == 0 {
			return c
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("containerd did not come up:\n%s", readBack(logf))
	return nil
}

func (c *containerd) ctr(args ...string) out {
	c.t.Helper()
	return engineRun(c.t, nil, 60*time.Second, "ctr", append([]string{"--address", c.sock}, args...)...)
}

func TestContainerdRunsSbxrun(t *testing.T) {
	c := newContainerd(t)
	if r := c.ctr("run", "--rm", "--runc-binary", sbxrunBin, "--rootfs", rootfs, "c1", "/bin/sh", "-c", "echo hi-from-sbxrun"); r.code != 0 || r.stdout != "hi-from-sbxrun\n" {
		t.Fatalf("ctr run --rm: %+v", r)
	}
	if r := c.ctr("run", "-d", "--runc-binary", sbxrunBin, "--rootfs", rootfs, "c2", "/bin/sleep", "300"); r.code != 0 {
		t.Fatalf("ctr run -d: %+v", r)
	}
	if r := c.ctr("task", "exec", "--exec-id", "e1", "c2", "/bin/sh", "-c", "echo exec-ok"); r.code != 0 || r.stdout != "exec-ok\n" {
		t.Errorf("ctr task exec: %+v", r)
	}
	// The shim keeps sbxrun's state under its own root: read it from there.
	shimRoot := "/run/containerd/runc/default"
	var st struct {
		Pid    int
		Status string
	}
	if err := json.Unmarshal([]byte(c.sbx.must("--root", shimRoot, "state", "c2")), &st); err != nil || st.Status != "running" || st.Pid <= 0 {
		t.Fatalf("sbxrun state of c2: %+v %v", st, err)
	}
	if r := c.ctr("task", "ps", "c2"); r.code != 0 || !hasField(r.stdout, strconv.Itoa(st.Pid)) {
		t.Errorf("ctr task ps does not list the init pid %d: %+v", st.Pid, r)
	}
	freezer := filepath.Join(cgroupOf(t, st.Pid, "freezer"), "freezer.state")
	if r := c.ctr("task", "pause", "c2"); r.code != 0 {
		t.Errorf("pause: %+v", r)
	}
	if data, _ := os.ReadFile(freezer); strings.TrimSpace(string(data)) != "FROZEN" {
		t.Errorf("after pause the cgroup is %q, want FROZEN", data)
	}
	if r := c.ctr("task", "ls"); !strings.Contains(r.stdout, "PAUSED") {
		t.Errorf("ctr task ls after pause: %s", r.stdout)
	}
	if r := c.ctr("task", "resume", "c2"); r.code != 0 {
		t.Errorf("resume: %+v", r)
	}
	if data, _ := os.ReadFile(freezer); strings.TrimSpace(string(data)) != "THAWED" {
		t.Errorf("after resume the cgroup is %q, want THAWED", data)
	}
	if r := c.ctr("task", "ls"); !strings.Contains(r.stdout, "RUNNING") {
		t.Errorf("ctr task ls after resume: %s", r.stdout)
	}
	if r := c.ctr("task", "kill", "-s", "SIGKILL", "c2"); r.code != 0 {
		t.Errorf("kill: %+v", r)
	}
	for i := 0; i < 100; i++ {
		if r := c.ctr("task", "ls"); !strings.Contains(r.stdout, "RUNNING") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := c.ctr("task", "delete", "c2"); r.code != 0 {
		t.Errorf("task delete: %+v", r)
	}
	if r := c.ctr("container", "delete", "c2"); r.code != 0 {
		t.Errorf("container delete: %+v", r)
	}
	// A tier by annotation, enforced under containerd too.
	r := c.ctr("run", "--rm", "--runc-binary", sbxrunBin, "--annotation", "dev.sbx.tier=strict", "--rootfs", rootfs, "c3", "/probe")
	var rep report
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
		t.Fatalf("ctr run strict probe: %+v", r)
	}
	rep.expect(t, map[string]string{"uid": "65534", "seccomp": "2", "keyctl": "EPERM", "rootfs_write": "EROFS", "interfaces": "[lo]"})
	if r := c.ctr("container", "ls", "-q"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("containers left: %q", r.stdout)
	}
}
