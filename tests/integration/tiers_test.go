package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// tierExpect is what the probe must report for each tier, whatever the
// runtime. Every denial here has its allowed counterpart in another tier
// of the table (or in the control of TestStrictDeniesAndControlAllows):
// socket_inet EAFNOSUPPORT (strict_plus) vs OK (strict), a masked tunable
// EMPTY and masked subtrees ENOENT (strict_plus) vs DATA (strict), and
// personality(READ_IMPLIES_EXEC) ENOSYS vs the query OK (moderate,
// permissive).
var tierExpect = map[string]map[string]string{
	"strict": {
		"seccomp": "2", "no_new_privs": "1", "cap_eff": "0000000000000000", "uid": "65534",
		"interfaces": "[lo]", "rootfs_write": "EROFS", "tmp_write": "OK", "shm_write": "EROFS",
		"proc_masked": "EMPTY", "proc_status": "DATA",
		"mount": "EPERM", "unshare_user": "EPERM", "clone_newuser": "EPERM", "keyctl": "EPERM", "ptrace": "EPERM",
		"unlisted_syscall": "ENOSYS", "sysv_shm": "EPERM",
		"socket_unix": "OK", "socket_inet": "OK",
		"proc_sys_mount": "ro", "proc_sys_tunable": "DATA", "proc_sys_kernel_dir": "DATA", "proc_sys_subtree": "DATA",
		"cap_last_cap": "DATA", "osrelease": "DATA",
		"personality": "ENOSYS", "personality_query": "ENOSYS",
	},
	"strict_plus": {
		"seccomp": "2", "no_new_privs": "1", "cap_eff": "0000000000000000", "uid": "65534",
		"uid_map":    "0 1879048192 65536",
		"interfaces": "[lo]", "rootfs_write": "EROFS", "tmp_write": "OK", "shm_write": "EROFS",
		"proc_masked": "EMPTY", "proc_status": "DATA",
		"mount": "EPERM", "unshare_user": "EPERM", "clone_newuser": "EPERM", "keyctl": "EPERM", "ptrace": "EPERM",
		"unlisted_syscall": "ENOSYS", "sysv_shm": "EPERM",
		"socket_unix": "OK", "socket_inet": "EAFNOSUPPORT",
		// /proc/sys stays mounted read-only; a mitigation tunable reads
		// empty, a kernel subdirectory and another subtree are empty
		// directories, and what libcontainer's init reads is still there.
		"proc_sys_mount": "ro", "proc_sys_tunable": "EMPTY", "proc_sys_kernel_dir": "ENOENT", "proc_sys_subtree": "ENOENT",
		"cap_last_cap": "DATA", "osrelease": "DATA",
		"personality": "ENOSYS", "personality_query": "ENOSYS",
	},
	"moderate": {
		"seccomp": "2", "no_new_privs": "1", "uid": "0", "interfaces": "[lo]",
		"rootfs_write": "EROFS", "tmp_write": "OK", "shm_write": "OK", "sysv_shm": "OK",
		"mount": "EPERM", "unshare_user": "EPERM", "clone_newuser": "EPERM", "keyctl": "EPERM", "ptrace": "EPERM",
		"unlisted_syscall": "ENOSYS", "socket_inet": "OK",
		"proc_sys_mount": "ro", "proc_sys_write": "EROFS", "proc_sys_tunable": "DATA", "cap_last_cap": "DATA",
		"personality": "ENOSYS", "personality_query": "OK",
	},
	"permissive": {
		"seccomp": "2", "no_new_privs": "1", "uid": "0",
		"rootfs_write": "OK", "sysv_shm": "OK",
		"mount": "EPERM", "unshare_user": "EPERM", "keyctl": "EPERM", "ptrace": "ESRCH",
		"unlisted_syscall": "ENOSYS", "socket_inet": "OK",
		"proc_sys_mount": "ro", "proc_sys_write": "EROFS", "proc_sys_tunable": "DATA",
		"personality": "ENOSYS", "personality_query": "OK",
	},
}

// execUnderSbxrun is the exec result per tier under sbxrun, which enforces
// process_exec=deny with its Landlock exec shim; runc runs the same spec
// without it, so there exec is OK in every tier.
var execUnderSbxrun = map[string]string{"strict": "EACCES", "strict_plus": "EACCES", "moderate": "EACCES", "permissive": "OK"}

// sbxProbe runs the probe in spec under sbxrun and returns its report and
// sbxrun's stderr; a failed run fails the test.
func sbxProbe(t *testing.T, s *sbx, spec *specs.Spec) (report, string) {
	t.Helper()
	spec.Process.Args = []string{"/probe"}
	id := fmt.Sprintf("t%d", seq.Add(1))
	r := s.run("", "run", "--bundle", bundle(t, spec), id)
	if r.code != 0 {
		t.Fatalf("sbxrun run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("probe output: %v\n%s", err, r.stdout)
	}
	return rep, r.stderr
}

// TestTierProbesUnderSbxrun runs every tier's compiled spec with sbxrun
// itself and, as the reference, with the system runc: both must report
// the tier's denials and allowed cases. strict_plus is the case runc alone
// never caught: libcontainer 1.5's init could not start it.
func TestTierProbesUnderSbxrun(t *testing.T) {
	s := newSbx(t)
	for _, tier := range []string{"strict", "strict_plus", "moderate", "permissive"} {
		t.Run(tier, func(t *testing.T) {
			rep, stderr := sbxProbe(t, s, compile(t, tier, nil))
			rep.expect(t, tierExpect[tier])
			rep.expect(t, map[string]string{"exec": execUnderSbxrun[tier]})
			checkTierExtras(t, tier, rep)
			// runsc is named by strict_plus only, and said to be unused.
			warned := strings.Contains(stderr, "not enforced: hardened_backend=runsc: not used")
			if warned != (tier == "strict_plus") {
				t.Errorf("runsc warning present=%v for %s; stderr:\n%s", warned, tier, stderr)
			}

			ref := probe(t, compile(t, tier, nil))
			ref.expect(t, tierExpect[tier])
			ref.expect(t, map[string]string{"exec": "OK"})
			checkTierExtras(t, tier, ref)
		})
	}
	log := s.must("log", "--json")
	if !strings.Contains(log, "unenforced: hardened_backend=runsc: not used") {
		t.Errorf("runsc not audited as unenforced:\n%s", log)
	}
}

func checkTierExtras(t *testing.T, tier string, r report) {
	t.Helper()
	switch tier {
	case "moderate", "permissive":
		if r["cap_eff"] == "0000000000000000" {
			t.Errorf("%s should keep its capability set", tier)
		}
	}
	if tier == "permissive" {
		if n := len(r["interfaces"].([]any)); n < 2 {
			t.Errorf("permissive shares the host network; got interfaces %v", r["interfaces"])
		}
	}
}

// TestStrictPlusRootlessUnderSbxrun: an unprivileged user runs strict_plus
// (a single-id user namespace) under sbxrun with the same /proc/sys
// masking and socket restriction; rootless strict is the paired allowed
// case.
func TestStrictPlusRootlessUnderSbxrun(t *testing.T) {
	u, home := rootlessSetup(t)
	os.Symlink(rootfs, filepath.Join(home, "rootfs"))
	run := func(tier string) (report, out) {
		t.Helper()
		if r := asUser(t, u, home, "spec", "--rootless", "--force", "--tier", tier, "--", "/probe"); r.code != 0 {
			t.Fatalf("spec --rootless --tier %s: %+v", tier, r)
		}
		// libcontainer rejects a symlinked rootfs: point the spec at the real one.
		cfg := filepath.Join(home, "config.json")
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), `"path": "rootfs"`, `"path": "`+rootfs+`"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := asUser(t, u, home, "run", fmt.Sprintf("rl%d", seq.Add(1)))
		if r.code != 0 {
			t.Fatalf("rootless %s run: %+v", tier, r)
		}
		var rep report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("probe: %v %s", err, r.stdout)
		}
		return rep, r
	}
	sp, r := run("strict_plus")
	sp.expect(t, map[string]string{
		"seccomp": "2", "no_new_privs": "1", "cap_eff": "0000000000000000", "uid": "0", "uid_map": "0 " + u.Uid + " 1",
		"interfaces": "[lo]", "rootfs_write": "EROFS", "mount": "EPERM", "keyctl": "EPERM", "unshare_user": "EPERM",
		"socket_inet": "EAFNOSUPPORT", "socket_unix": "OK",
		"proc_sys_mount": "ro", "proc_sys_tunable": "EMPTY", "proc_sys_kernel_dir": "ENOENT", "proc_sys_subtree": "ENOENT",
		"cap_last_cap": "DATA", "personality": "ENOSYS", "exec": "EACCES",
	})
	if !strings.Contains(r.stderr, "hardened_backend=runsc: not used") {
		t.Errorf("rootless strict_plus: runsc not reported as unused:\n%s", r.stderr)
	}
	st, r := run("strict")
	st.expect(t, map[string]string{
		"seccomp": "2", "uid": "0", "uid_map": "0 " + u.Uid + " 1",
		"socket_inet": "OK", "proc_sys_tunable": "DATA", "proc_sys_kernel_dir": "DATA", "proc_sys_subtree": "DATA", "cap_last_cap": "DATA",
	})
	if strings.Contains(r.stderr, "runsc") {
		t.Errorf("rootless strict mentions runsc:\n%s", r.stderr)
	}
}
