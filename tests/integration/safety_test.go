package integration

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// runWithFiles runs sbxrun with extra open files as its fds 3, 4, ….
func (s *sbx) runWithFiles(files []*os.File, args ...string) out {
	s.t.Helper()
	c := s.cmd(args...)
	c.ExtraFiles = files
	return runCmd(s.t, c, 0)
}

// TestNoHostFdLeaks: an fd sbxrun inherits reaches the container only
// when --preserve-fds passes it on.
func TestNoHostFdLeaks(t *testing.T) {
	s := newSbx(t)
	f, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	spec := compile(t, "strict", nil)
	// readlink only, no listing or pipeline: busybox runs some applets
	// inside pid 1's own shell, whose directory or pipe fds would show.
	spec.Process.Args = []string{"sh", "-c", "readlink /proc/1/fd/3 || echo none; for f in 4 5 6 7 8 9; do readlink /proc/1/fd/$f && echo LEAK; done; echo end"}
	r := s.runWithFiles([]*os.File{f}, "run", "--bundle", bundle(t, spec), "fd1")
	if r.code != 0 || r.stdout != "none\nend\n" {
		t.Errorf("without --preserve-fds the container saw: %+v", r)
	}
	r = s.runWithFiles([]*os.File{f}, "run", "--preserve-fds", "1", "--bundle", bundle(t, spec), "fd2")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "/etc/hostname\n") {
		t.Errorf("with --preserve-fds 1: %+v", r)
	}
}

// TestCwdThroughProcFdRefused is the CVE-2024-21626 canary: a cwd that
// resolves through a leaked host fd must not start.
func TestCwdThroughProcFdRefused(t *testing.T) {
	s := newSbx(t)
	dir, err := os.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, cwd := range []string{"/proc/self/fd/3", "/proc/1/fd/3"} {
		spec := plainSpec(t, "sh", "-c", "ls /etc/shadow")
		spec.Process.Cwd = cwd
		id := fmt.Sprintf("cwd%d", seq.Add(1))
		r := s.runWithFiles([]*os.File{dir}, "run", "--bundle", bundle(t, spec), id)
		if r.code == 0 {
			t.Errorf("cwd %s: container ran: %+v", cwd, r)
		}
		if _, err := os.Stat(filepath.Join(s.root, id)); !os.IsNotExist(err) {
			t.Errorf("cwd %s: state left behind", cwd)
		}
	}
	ok := plainSpec(t, "true")
	if r := s.runWithFiles([]*os.File{dir}, "run", "--bundle", bundle(t, ok), "cwdok"); r.code != 0 {
		t.Errorf("paired cwd / failed: %+v", r)
	}
}

// copyRootfs makes a private copy of the test rootfs to tamper with.
func copyRootfs(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbxrun-rootfs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	if out, err := exec.Command("cp", "-a", rootfs+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dir
}

func bundleAt(t *testing.T, spec *specs.Spec, root string) string {
	t.Helper()
	b := bundle(t, spec)
	spec.Root.Path = root
	data := mustJSON(t, spec)
	os.WriteFile(filepath.Join(b, "config.json"), data, 0o644)
	return b
}

// TestSymlinkedProcAndSysRefused: a rootfs whose /proc or /sys is a
// symlink would have procfs or sysfs mounted wherever it points.
func TestSymlinkedProcAndSysRefused(t *testing.T) {
	s := newSbx(t)
	for _, d := range []string{"proc", "sys"} {
		root := copyRootfs(t)
		os.Remove(filepath.Join(root, d))
		if err := os.Symlink("/tmp", filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
		r := s.run("", "run", "--bundle", bundleAt(t, plainSpec(t, "true"), root), "sym"+d)
		if r.code == 0 {
			t.Errorf("/%s as a symlink: container ran", d)
		}
	}
	if r := s.run("", "run", "--bundle", bundleAt(t, plainSpec(t, "true"), copyRootfs(t)), "symok"); r.code != 0 {
		t.Errorf("paired intact rootfs failed: %+v", r)
	}
}

// TestFakeDevNullMaskingRefused is the CVE-2025-31133 canary: masking
// with a /dev/null that is really a symlink to a kernel tunable would
// expose that tunable read-write at the masked path.
func TestFakeDevNullMaskingRefused(t *testing.T) {
	s := newSbx(t)
	before, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		t.Fatal(err)
	}
	root := copyRootfs(t)
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	os.Remove(filepath.Join(root, "dev", "null"))
	os.Symlink("/proc/sys/kernel/core_pattern", filepath.Join(root, "dev", "null"))
	spec := plainSpec(t, "sh", "-c", "echo '|/tmp/pwn' > /proc/timer_list; cat /proc/timer_list")
	// No /dev tmpfs: the rootfs's own /dev (with the fake null) is used.
	var mounts []specs.Mount
	for _, m := range spec.Mounts {
		if m.Destination != "/dev" {
			mounts = append(mounts, m)
		}
	}
	spec.Mounts = mounts
	spec.Linux.MaskedPaths = []string{"/proc/timer_list"}
	r := s.run("", "run", "--bundle", bundleAt(t, spec, root), "devnull")
	after, _ := os.ReadFile("/proc/sys/kernel/core_pattern")
	if string(after) != string(before) {
		os.WriteFile("/proc/sys/kernel/core_pattern", before, 0o644)
		t.Fatalf("host core_pattern changed to %q (restored)", after)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "/dev/null") {
		t.Errorf("a container with a fake /dev/null started: %+v", r)
	}
}

// TestRuntimeBinaryNotWritableFromInside: while sbxrun execs into the
// container over and over, a process inside tries to open every visible
// process's executable for writing; the runtime binary stays intact.
func TestRuntimeBinaryNotWritableFromInside(t *testing.T) {
	s := newSbx(t)
	sum := func() [32]byte {
		data, err := os.ReadFile(sbxrunBin)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	want := sum()
	spec := compile(t, "permissive", nil)
	spec.Process.Args = []string{"sh", "-c", `end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do for p in /proc/[0-9]*; do printf X 2>/dev/null >> $p/exe && echo "WROTE $(readlink $p/exe)"; done; done; echo done`}
	done := make(chan out, 1)
	go func() { done <- s.run("", "run", "--bundle", bundle(t, spec), "exe") }()
	time.Sleep(300 * time.Millisecond)
	for i := 0; i < 15; i++ {
		s.run("", "exec", "exe", "true")
	}
	r := <-done
	if r.code != 0 || strings.Contains(r.stdout, "WROTE") || !strings.Contains(r.stdout, "done") {
		t.Errorf("inside process: %+v", r)
	}
	if sum() != want {
		t.Fatal("the sbxrun binary was modified from inside a container")
	}
}

// TestSharedPropagationDoesNotLeak: a bind mount asking for shared
// propagation is made rslave, so a mount inside never appears on the host.
func TestSharedPropagationDoesNotLeak(t *testing.T) {
	s := newSbx(t)
	host, err := os.MkdirTemp("", "sbxrun-prop-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(host)
	os.MkdirAll(filepath.Join(host, "sub"), 0o755)
	// Make the host side a shared mount, so propagation would happen.
	if out, err := exec.Command("mount", "--bind", "--make-shared", host, host).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	defer exec.Command("umount", "-R", host).Run()
	spec := plainSpec(t, "sh", "-c", "mount -t tmpfs leak /mnt/sub && echo mounted")
	spec.Mounts = append(spec.Mounts, specs.Mount{Destination: "/mnt", Type: "bind", Source: host, Options: []string{"rbind", "rshared"}})
	// With an rshared rootfs too, runc 1.1.5 does leak this mount to the host.
	spec.Linux.RootfsPropagation = "rshared"
	spec.Process.Capabilities.Bounding = append(spec.Process.Capabilities.Bounding, "CAP_SYS_ADMIN")
	spec.Process.Capabilities.Effective = append(spec.Process.Capabilities.Effective, "CAP_SYS_ADMIN")
	spec.Process.Capabilities.Permitted = append(spec.Process.Capabilities.Permitted, "CAP_SYS_ADMIN")
	r := s.run("", "run", "--bundle", bundle(t, spec), "prop")
	if r.code != 0 || r.stdout != "mounted\n" {
		t.Fatalf("container: %+v", r)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(mi), filepath.Join(host, "sub")) {
		exec.Command("umount", filepath.Join(host, "sub")).Run()
		t.Fatal("a mount made inside the container appeared on the host")
	}
	if log := s.must("log", "--json"); !strings.Contains(log, "made rslave") {
		t.Errorf("the propagation rewrite was not audited:\n%s", log)
	}
}

// TestDeleteForceAfterKilledCreate: sbxrun killed with SIGKILL in the
// middle of create (here while a createRuntime hook runs) leaves no state,
// cgroup or process once delete --force has run.
func TestDeleteForceAfterKilledCreate(t *testing.T) {
	s := newSbx(t)
	spec := plainSpec(t, "sleep", "300")
	spec.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", "sleep 5"}}}}
	b := bundle(t, spec)
	c := s.cmd("create", "--bundle", b, "k9")
	c.Stdout, c.Stderr = tempFile(t), tempFile(t)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(filepath.Join(s.root, "k9")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	c.Process.Kill()
	c.Wait()
	// The create journal says where the cgroups are; they must exist now
	// (the kill came after libcontainer made them) and be gone after delete.
	var j struct {
		CgroupPaths map[string]string `json:"cgroup_paths"`
	}
	data, err := os.ReadFile(filepath.Join(s.root, ".create-k9.json"))
	if err != nil || json.Unmarshal(data, &j) != nil {
		t.Fatalf("create journal: %v %s", err, data)
	}
	existing := 0
	for _, p := range j.CgroupPaths {
		if _, err := os.Stat(p); err == nil {
			existing++
		}
	}
	if existing == 0 {
		t.Fatalf("no cgroup existed after the killed create: %v", j.CgroupPaths)
	}
	s.must("delete", "--force", "k9")
	if _, err := os.Stat(filepath.Join(s.root, "k9")); !os.IsNotExist(err) {
		t.Error("state dir left behind")
	}
	for _, p := range j.CgroupPaths {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left behind", p)
		}
	}
	if entries, _ := os.ReadDir(s.root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
