package policy_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStrictPlusMasksProcSysButNotCapLastCap: strict_plus hides the
// /proc/sys subtrees and kernel tunables its data lists, keeps /proc/sys
// read-only like every tier, and hides nothing libcontainer's init reads.
// strict, the paired tier, hides none of them.
func TestStrictPlusMasksProcSysButNotCapLastCap(t *testing.T) {
	sp := mustCompile(t, "strict_plus", nil)
	for _, p := range []string{"/proc/sys/vm", "/proc/sys/net", "/proc/sys/fs", "/proc/sys/kernel/random", "/proc/sys/kernel/kptr_restrict", "/proc/sys/kernel/core_pattern", "/proc/kcore"} {
		if !contains(sp.Isolate.MaskedPaths, p) {
			t.Errorf("strict_plus does not mask %s: %v", p, sp.Isolate.MaskedPaths)
		}
	}
	for _, p := range sp.Isolate.MaskedPaths {
		for _, r := range profiles.RuntimeReads {
			if policy.Within(r, p) {
				t.Errorf("strict_plus masks %s, hiding %s from the runtime", p, r)
			}
		}
	}
	if !contains(sp.Isolate.ReadonlyPaths, "/proc/sys") {
		t.Errorf("strict_plus: /proc/sys not read-only: %v", sp.Isolate.ReadonlyPaths)
	}
	st := mustCompile(t, "strict", nil)
	for _, p := range st.Isolate.MaskedPaths {
		if strings.HasPrefix(p, "/proc/sys") {
			t.Errorf("strict masks %s", p)
		}
	}
	if !contains(st.Isolate.ReadonlyPaths, "/proc/sys") {
		t.Errorf("strict: /proc/sys not read-only")
	}
}

// TestHardenedBackendReportedUnenforced: strict_plus names runsc but
// nothing runs it, so every compilation says so; no other tier does.
func TestHardenedBackendReportedUnenforced(t *testing.T) {
	for _, f := range []policy.HostFacts{facts(), func() policy.HostFacts {
		r := facts()
		r.Rootless, r.UID, r.GID = true, 1000, 1000
		return r
	}()} {
		g, err := policy.Compile("strict_plus", nil, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if un := strings.Join(g.Unenforced, "\n"); !strings.Contains(un, "hardened_backend=runsc: not used") {
			t.Errorf("rootless=%v: runsc not reported as not enforced: %v", f.Rootless, g.Unenforced)
		}
		for _, n := range g.Notes {
			if strings.Contains(n, "runsc") {
				t.Errorf("a note still talks about runsc: %s", n)
			}
		}
	}
	for _, tier := range []string{"strict", "moderate", "permissive"} {
		if un := strings.Join(mustCompile(t, tier, nil).Unenforced, "\n"); strings.Contains(un, "hardened_backend") {
			t.Errorf("%s reports a backend: %s", tier, un)
		}
	}
}

// personalityRules returns, per action, the argument conditions of every
// rule naming personality (nil for an unconditional rule).
func personalityRules(g *policy.Grants) map[string][][]policy.SyscallArg {
	out := map[string][][]policy.SyscallArg{}
	for _, grp := range g.Syscalls.Groups {
		for _, r := range grp.Rules {
			if contains(r.Names, "personality") {
				out[grp.Action] = append(out[grp.Action], r.Args)
			}
		}
	}
	return out
}

// TestPersonalityOnlySafeValues: moderate and permissive allow
// personality() only for moby's five values, one single-condition rule
// each; strict and strict_plus do not allow it at all.
func TestPersonalityOnlySafeValues(t *testing.T) {
	var want [][]policy.SyscallArg
	for _, v := range []uint64{0x0, 0x8, 0x20000, 0x20008, 0xffffffff} {
		want = append(want, []policy.SyscallArg{{Index: 0, Value: v, Op: "SCMP_CMP_EQ"}})
	}
	for _, tier := range []string{"moderate", "permissive"} {
		for _, arch := range []string{"amd64", "arm64"} {
			f := facts()
			f.Arch = arch
			g, err := policy.Compile(tier, nil, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := personalityRules(g)
			if len(got) != 1 || !reflect.DeepEqual(got["allow"], want) {
				t.Errorf("%s/%s personality rules = %+v, want allow only %+v", tier, arch, got, want)
			}
		}
	}
	for _, tier := range []string{"strict", "strict_plus"} {
		if got := personalityRules(mustCompile(t, tier, nil)); len(got) != 0 {
			t.Errorf("%s allows personality: %+v", tier, got)
		}
	}
	// A config may still allow it outright, but only as a widening.
	cfg := parse(t, "syscalls: {allow: [personality]}")
	if _, err := policy.Compile("moderate", cfg, facts(), nil); err == nil || !strings.Contains(err.Error(), "widens") {
		t.Errorf("unconditional personality without an override: %v", err)
	}
}

func TestConditionsDescribeArgumentRules(t *testing.T) {
	g := mustCompile(t, "moderate", nil)
	var got []string
	for _, grp := range g.Syscalls.Groups {
		if grp.Name == "personality" {
			got = grp.Conditions()
			if s := grp.String(); s != "personality (allow, 1)" {
				t.Errorf("String() = %q", s)
			}
		}
		if grp.Name == "memory" && len(grp.Conditions()) != 0 {
			t.Errorf("unconditional group has conditions: %v", grp.Conditions())
		}
	}
	want := []string{"personality only when arg0 == 0x0 or arg0 == 0x8 or arg0 == 0x20000 or arg0 == 0x20008 or arg0 == 0xffffffff"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Conditions() = %q, want %q", got, want)
	}
	for _, grp := range g.Syscalls.Groups {
		if grp.Name == "clone-no-namespaces" {
			if c := grp.Conditions(); len(c) != 1 || c[0] != "clone only when arg0 & 0x7e020000 == 0x0" {
				t.Errorf("clone conditions = %q", c)
			}
		}
	}
}
