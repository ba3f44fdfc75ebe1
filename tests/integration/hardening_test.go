package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestEngineFileMountsExposeNoHostPath: the per-container files engines
// bind-mount (/etc/hosts, /etc/hostname, …) are the one bind a tier
// without fs_read keeps, so they must not carry anything else of the host
// into the sandbox: not a directory, not a private file of some user. The
// paired case is a real engine file, which the workload reads.
func TestEngineFileMountsExposeNoHostPath(t *testing.T) {
	s := newSbx(t)
	secretDir := t.TempDir()
	os.WriteFile(filepath.Join(secretDir, "marker-dir-entry"), []byte("x"), 0o600)
	key := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(key, []byte("HOST-PRIVATE-KEY\n"), 0o600)
	// A private file of a host user whose uid the spec gives its process
	// (kept as given where it is not 0).
	userKey := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(userKey, []byte("HOST-PRIVATE-KEY\n"), 0o600)
	os.Chown(userKey, 4242, 4242)
	os.Chown(filepath.Dir(userKey), 4242, 4242)
	engineDir := t.TempDir()
	os.Chmod(engineDir, 0o755)
	hosts := filepath.Join(engineDir, "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 engine-made-hosts\n"), 0o644)

	for _, tier := range []string{"strict", "moderate"} {
		for _, tc := range []struct {
			name, src, dst string
			uid            uint32
		}{
			{"directory", secretDir, "/etc/hosts", 0},
			{"private file", key, "/etc/hostname", 0},
			{"private file of the process's uid", userKey, "/etc/resolv.conf", 4242},
		} {
			t.Run(tier+"/"+tc.name, func(t *testing.T) {
				spec := annotate(plainSpec(t, "sh", "-c", "ls "+tc.dst+"; cat "+tc.dst), "dev.sbx.tier", tier)
				spec.Process.User = specs.User{UID: tc.uid, GID: tc.uid}
				spec.Mounts = append(spec.Mounts, specs.Mount{Destination: tc.dst, Type: "bind", Source: tc.src, Options: []string{"rbind", "ro"}})
				r := s.run("", "run", "--bundle", bundleAt(t, spec, copyRootfs(t)), fmt.Sprintf("ef%d", seq.Add(1)))
				if strings.Contains(r.stdout, "marker-dir-entry") || strings.Contains(r.stdout, "HOST-PRIVATE-KEY") {
					t.Errorf("tier %s: the host's %s %s is visible at %s: %q", tier, tc.name, tc.src, tc.dst, r.stdout)
				}
			})
		}
		// Paired: an engine's own hosts file is kept, read-only.
		spec := annotate(plainSpec(t, "cat", "/etc/hosts"), "dev.sbx.tier", tier)
		spec.Mounts = append(spec.Mounts, specs.Mount{Destination: "/etc/hosts", Type: "bind", Source: hosts, Options: []string{"rbind", "ro"}})
		if got := s.must("run", "--bundle", bundleAt(t, spec, copyRootfs(t)), fmt.Sprintf("ef%d", seq.Add(1))); !strings.Contains(got, "engine-made-hosts") {
			t.Errorf("tier %s: the engine's hosts file is not visible: %q", tier, got)
		}
	}
}

// TestSymlinkedBindSourceCannotReachForbiddenPath: a bind source that is,
// or passes through, a symlink is judged by where it leads, not by its
// name: under permissive (fs_read=allow) a link to /root, which no tier
// may mount, does not show /root. The paired link to an ordinary directory
// is mounted.
func TestSymlinkedBindSourceCannotReachForbiddenPath(t *testing.T) {
	entries, err := os.ReadDir("/root")
	if err != nil || len(entries) == 0 {
		t.Skip("needs a non-empty /root to tell whether it is visible")
	}
	marker := entries[0].Name()
	s := newSbx(t)
	links := t.TempDir()
	os.Chmod(links, 0o755)
	os.Symlink("/root", filepath.Join(links, "to-root"))
	open := t.TempDir()
	os.Chmod(open, 0o755)
	os.WriteFile(filepath.Join(open, "ordinary-file"), []byte("x"), 0o644)
	os.Symlink(open, filepath.Join(links, "to-open"))

	spec := annotate(plainSpec(t, "ls", "-a", "/h"), "dev.sbx.tier", "permissive")
	spec.Mounts = append(spec.Mounts, specs.Mount{Destination: "/h", Type: "bind", Source: filepath.Join(links, "to-root"), Options: []string{"rbind", "ro"}})
	r := s.run("", "run", "--bundle", bundleAt(t, spec, copyRootfs(t)), "sl1")
	for _, l := range strings.Fields(r.stdout) {
		if l == marker {
			t.Errorf("a symlink to the forbidden /root mounted it: %q", r.stdout)
		}
	}
	spec = annotate(plainSpec(t, "ls", "-a", "/h"), "dev.sbx.tier", "permissive")
	spec.Mounts = append(spec.Mounts, specs.Mount{Destination: "/h", Type: "bind", Source: filepath.Join(links, "to-open"), Options: []string{"rbind", "ro"}})
	if got := s.must("run", "--bundle", bundleAt(t, spec, copyRootfs(t)), "sl2"); !strings.Contains(got, "ordinary-file") {
		t.Errorf("paired link to an ordinary directory: %q", got)
	}
}

// TestTmpfsOptionsCannotUndoHardening: a tmpfs the spec brings gets
// nosuid and nodev (and noexec where exec is denied) as its effective
// options, even when the spec lists the opposite options after them.
func TestTmpfsOptionsCannotUndoHardening(t *testing.T) {
	s := newSbx(t)
	for _, tc := range []struct {
		name string
		opts []string
	}{
		{"plain", nil},
		{"undone later", []string{"nosuid", "nodev", "noexec", "suid", "dev", "exec"}},
	} {
		spec := annotate(plainSpec(t, "grep", " /scratch ", "/proc/mounts"), "dev.sbx.tier", "strict")
		spec.Mounts = append(spec.Mounts, specs.Mount{Destination: "/scratch", Type: "tmpfs", Source: "tmpfs", Options: tc.opts})
		got := s.must("run", "--bundle", bundleAt(t, spec, copyRootfs(t)), fmt.Sprintf("tf%d", seq.Add(1)))
		f := strings.Fields(got)
		if len(f) < 4 {
			t.Fatalf("%s: /scratch not mounted: %q", tc.name, got)
		}
		opts := "," + f[3] + ","
		for _, want := range []string{"nosuid", "nodev", "noexec"} {
			if !strings.Contains(opts, ","+want+",") {
				t.Errorf("%s: /scratch is mounted %s, without %s", tc.name, f[3], want)
			}
		}
	}
}

// TestUpdateSwapBoundToContainerLimit: where the tier allows no swap,
// memory+swap may not rise above the container's own memory limit, also
// when that limit is below the tier's (the spec asked for less). The
// paired update sets memory+swap equal to the limit.
func TestUpdateSwapBoundToContainerLimit(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sleep", "300"}
	lim := int64(64 << 20)
	spec.Linux.Resources.Memory.Limit = &lim
	spec.Linux.Resources.Memory.Swap = &lim
	s.must("run", "-d", "--bundle", bundle(t, spec), "sw")
	mem := cgroupOf(t, int(s.state("sw")["pid"].(float64)), "memory")
	want := strconv.Itoa(64 << 20)
	if got := readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); got != want {
		t.Fatalf("memory+swap starts at %s, want %s", got, want)
	}
	if r := s.run("", "update", "--memory-swap", strconv.Itoa(256<<20), "sw"); r.code != 3 || !strings.Contains(r.stderr, "SANDBOX_POLICY_CONFLICT") {
		t.Errorf("memory+swap raised above the memory limit under strict: %+v", r)
	}
	if got := readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); got != want {
		t.Errorf("memory+swap is %s with a %s memory limit: room to swap under a tier that allows none", got, want)
	}
	if r := s.run("", "update", "--memory-swap", want, "sw"); r.code != 0 {
		t.Errorf("paired update to memory+swap = memory: %+v", r)
	}
}

// TestSpecCgroupsPathCannotReconfigureHostCgroups: the spec's
// cgroupsPath must not let a sandbox write its limits into a cgroup it
// does not own, or delete it: a host cgroup with a process in it keeps
// its limits and its process. The paired fresh path gets the tier's limits.
func TestSpecCgroupsPathCannotReconfigureHostCgroups(t *testing.T) {
	name := fmt.Sprintf("sbxit-victim-%d", os.Getpid())
	var dirs []string
	for _, ctrl := range []string{"memory", "pids"} {
		d := filepath.Join("/sys/fs/cgroup", ctrl, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cgroup v1 %s: %v", ctrl, err)
		}
		dirs = append(dirs, d)
	}
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		victim.Process.Kill()
		victim.Wait()
		for _, d := range dirs {
			os.Remove(d)
		}
	})
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(victim.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	memBefore := readCgroupFile(t, dirs[0], "memory.limit_in_bytes")
	pidsBefore := readCgroupFile(t, dirs[1], "pids.max")

	s := newSbx(t)
	spec := annotate(plainSpec(t, "true"), "dev.sbx.tier", "strict")
	spec.Linux.CgroupsPath = "/" + name
	s.run("", "run", "--bundle", bundle(t, spec), "cgv")
	if got := readCgroupFile(t, dirs[0], "memory.limit_in_bytes"); got != memBefore {
		t.Errorf("the sandbox set the host cgroup's memory limit to %s (was %s)", got, memBefore)
	}
	if got := readCgroupFile(t, dirs[1], "pids.max"); got != pidsBefore {
		t.Errorf("the sandbox set the host cgroup's pids.max to %s (was %s)", got, pidsBefore)
	}
	if !pidAlive(victim.Process.Pid) {
		t.Error("the host cgroup's process was killed")
	}
	// Paired: a fresh path is the sandbox's own and gets the tier's limits.
	fresh := annotate(plainSpec(t, "sleep", "300"), "dev.sbx.tier", "strict")
	fresh.Linux.CgroupsPath = fmt.Sprintf("/sbxit-fresh-%d", os.Getpid())
	s.must("run", "-d", "--bundle", bundle(t, fresh), "cgf")
	mem := cgroupOf(t, int(s.state("cgf")["pid"].(float64)), "memory")
	if got := readCgroupFile(t, mem, "memory.limit_in_bytes"); got != strconv.Itoa(256<<20) {
		t.Errorf("fresh cgroupsPath: memory limit %s", got)
	}
}

// TestRuntimeUsageErrorsAreConfigInvalid: runtime flags that contradict
// the spec or name nothing usable are bad input (SANDBOX_CONFIG_INVALID,
// exit 2), not internal errors, and leave nothing behind.
func TestRuntimeUsageErrorsAreConfigInvalid(t *testing.T) {
	s := newSbx(t)
	b := bundle(t, annotate(plainSpec(t, "true"), "dev.sbx.tier", "strict"))
	for _, args := range [][]string{
		{"create", "--bundle", b, "--console-socket", filepath.Join(t.TempDir(), "none.sock"), "u1"},
		{"create", "--bundle", b, "--preserve-fds", "40", "u2"},
		{"create", "--bundle", b, "--pid-file", "/nonexistent/dir/pid", "u3"},
	} {
		r := s.run("", args...)
		if r.code != 2 || !strings.Contains(r.stderr, "SANDBOX_CONFIG_INVALID") {
			t.Errorf("%v: exit %d %q, want 2 SANDBOX_CONFIG_INVALID", args, r.code, r.stderr)
		}
	}
	if got := strings.TrimSpace(s.must("list", "-q")); got != "" {
		t.Errorf("refused creates left containers: %q", got)
	}
	// Paired: the same bundle is created and deleted.
	s.must("create", "--bundle", b, "u4")
	s.must("delete", "--force", "u4")
}

// TestExecIsAuditedAndChecked: every exec into a tiered container is one
// audit record (allowed, or refused with its code), and an exec whose cwd
// lies under /proc is refused like a container's would be. The paired
// exec with an ordinary cwd runs.
func TestExecIsAuditedAndChecked(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, spec), "ea")
	if got := s.must("exec", "--cwd", "/tmp", "ea", "pwd"); got != "/tmp\n" {
		t.Errorf("paired exec with cwd /tmp: %q", got)
	}
	if r := s.run("", "exec", "--cwd", "/proc/1", "ea", "pwd"); r.code != 2 || !strings.Contains(r.stderr, "SANDBOX_SPEC_INVALID") {
		t.Errorf("exec with cwd /proc/1: %+v", r)
	}
	log := s.must("log", "--json")
	if n := strings.Count(log, `"operation":"exec","target":"ea","result":"allowed"`); n != 1 {
		t.Errorf("%d allowed exec records, want 1:\n%s", n, log)
	}
}

// TestTamperedGrantsRefusalIsAudited: exec and update refuse a container
// whose recorded grants do not match its annotations, and each refusal is
// in the audit log with its code, like every other refused decision.
func TestTamperedGrantsRefusalIsAudited(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "strict", nil)
	spec.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, spec), "ta")
	if got := s.must("exec", "ta", "sh", "-c", "id -u"); got != "65534\n" {
		t.Fatalf("paired exec before tampering: %q", got)
	}
	f := filepath.Join(s.root, "ta", "sbx-grants.json")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f, []byte(strings.Replace(string(data), `"capabilities":[]`, `"capabilities":["CAP_SYS_ADMIN"]`, 1)), 0o600)
	if r := s.run("", "exec", "ta", "true"); r.code != 6 {
		t.Fatalf("exec with tampered grants: %+v", r)
	}
	if r := s.run("", "update", "--pids-limit", "10", "ta"); r.code != 6 {
		t.Fatalf("update with tampered grants: %+v", r)
	}
	os.Remove(f)
	if r := s.run("", "exec", "ta", "true"); r.code != 6 {
		t.Errorf("exec with the grants removed: %+v", r)
	}
	blocked := s.must("log", "--json", "--blocked-only")
	for _, op := range []string{"exec", "update"} {
		if !strings.Contains(blocked, `"operation":"`+op+`","target":"ta","result":"blocked"`) || !strings.Contains(blocked, "SANDBOX_STATE_UNTRUSTED") {
			t.Errorf("the refused %s of tampered grants is not audited:\n%s", op, blocked)
		}
	}
}
