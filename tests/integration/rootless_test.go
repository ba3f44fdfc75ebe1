package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

const rootlessUser = "sbxrun-rootless"

// asUser runs sbxrun as an unprivileged user with its own XDG dirs.
func asUser(t *testing.T, u *user.User, home string, args ...string) out {
	t.Helper()
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := exec.Command(sbxrunBin, args...)
	c.Dir = home
	c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home, "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config")}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return runCmd(t, c, 0)
}

func rootlessSetup(t *testing.T) (*user.User, string) {
	t.Helper()
	if _, err := user.Lookup(rootlessUser); err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", rootlessUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v %s", err, out)
		}
	}
	u, err := user.Lookup(rootlessUser)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is private to root, and the user must reach home.
	home, err := os.MkdirTemp("", "sbxrun-rl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o755)
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range []string{"", "run", "state", "config"} {
		p := filepath.Join(home, d)
		os.MkdirAll(p, 0o700)
		os.Chown(p, uid, gid)
	}
	return u, home
}

func TestRootlessStrict(t *testing.T) {
	u, home := rootlessSetup(t)
	// The shared rootfs is root-owned and world-readable: a rootless
	// container reads it as the overflow id, which is enough for strict.
	os.Symlink(rootfs, filepath.Join(home, "rootfs"))
	if r := asUser(t, u, home, "spec", "--rootless", "--tier", "strict", "--", "/probe"); r.code != 0 {
		t.Fatalf("spec --rootless: %+v", r)
	}
	// libcontainer rejects a symlinked rootfs: point the spec at the real one.
	data, _ := os.ReadFile(filepath.Join(home, "config.json"))
	os.WriteFile(filepath.Join(home, "config.json"), []byte(strings.Replace(string(data), `"path": "rootfs"`, `"path": "`+rootfs+`"`, 1)), 0o644)
	r := asUser(t, u, home, "run", "rl1")
	if r.code != 0 {
		t.Fatalf("rootless run: %+v", r)
	}
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("probe: %v %s", err, r.stdout)
	}
	rep.expect(t, map[string]string{"seccomp": "2", "no_new_privs": "1", "cap_eff": "0000000000000000",
		"interfaces": "[lo]", "keyctl": "EPERM", "mount": "EPERM", "rootfs_write": "EROFS", "uid_map": "0 " + u.Uid + " 1"})
	// No cgroup delegation here: the limits are reported, never silently dropped.
	if !strings.Contains(r.stderr, "limits.memory=268435456: not enforced") {
		t.Errorf("unenforced memory limit not reported on stderr:\n%s", r.stderr)
	}
	log := asUser(t, u, home, "log", "--json")
	if !strings.Contains(log.stdout, "unenforced: limits.memory") {
		t.Errorf("unenforced limit not audited:\n%s", log.stdout)
	}
}

func TestRootlessPlainSpecLimitsReported(t *testing.T) {
	u, home := rootlessSetup(t)
	spec := plainSpec(t, "sh", "-c", "ulimit -u")
	spec.Root.Path = rootfs
	limit := int64(50)
	spec.Linux.Resources.Pids = &specsPids{Limit: &limit}
	toRootless(spec, u)
	data, _ := json.Marshal(spec)
	os.WriteFile(filepath.Join(home, "config.json"), data, 0o644)
	r := asUser(t, u, home, "run", "rl2")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "50" {
		t.Fatalf("pids limit as RLIMIT_NPROC: %+v", r)
	}
	if !strings.Contains(r.stderr, "pids.limit=50: applied as RLIMIT_NPROC") {
		t.Errorf("substitution not reported:\n%s", r.stderr)
	}
}

type specsPids = specs.LinuxPids

// toRootless turns a runc-spec default into what `runc spec --rootless`
// gives: a user namespace mapping container root to the user, no network
// namespace setup that needs privileges beyond it.
func toRootless(s *specs.Spec, u *user.User) {
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
	s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(uid), Size: 1}}
	s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(gid), Size: 1}}
	var mounts []specs.Mount
	for _, m := range s.Mounts {
		switch m.Destination {
		case "/sys/fs/cgroup":
			continue
		case "/dev/pts":
			var opts []string
			for _, o := range m.Options {
				if o != "gid=5" {
					opts = append(opts, o)
				}
			}
			m.Options = opts
		}
		mounts = append(mounts, m)
	}
	s.Mounts = mounts
	s.Process.Rlimits = nil
}

// TestRootlessExplainTellsTheTruth: explain run by an unprivileged user,
// without --rootless, describes how that user's sandbox really runs: as
// the user's own uid, with memory and cpu limits not enforced. Root sees
// the rootful form (paired).
func TestRootlessExplainTellsTheTruth(t *testing.T) {
	u, home := rootlessSetup(t)
	r := asUser(t, u, home, "explain", "--tier", "strict")
	if r.code != 0 || !strings.Contains(r.stdout, "= your own uid "+u.Uid+":") || !strings.Contains(r.stdout, "Limits: NOT ENFORCED for memory") {
		t.Errorf("explain as %s:\n%s%s", u.Username, r.stdout, r.stderr)
	}
	s := newSbx(t)
	root := s.must("explain", "--tier", "strict")
	if strings.Contains(root, "NOT ENFORCED") || !strings.Contains(root, "Runs as 65534:65534 in the sandbox = the same id on the host") {
		t.Errorf("explain as root:\n%s", root)
	}
	if rl := s.must("explain", "--tier", "strict", "--rootless"); !strings.Contains(rl, "NOT ENFORCED") {
		t.Errorf("explain --rootless as root:\n%s", rl)
	}
}
