package enforce

import (
	"strconv"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// personalityAllow is a spec allow rule for personality with the given
// argument conditions.
func personalityAllow(args ...specs.LinuxSeccompArg) specs.LinuxSyscall {
	return specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActAllow, Args: args}
}

func eq0(v uint64) specs.LinuxSeccompArg {
	return specs.LinuxSeccompArg{Index: 0, Value: v, Op: specs.OpEqualTo}
}

// TestLintPersonality: the tier's own conditional personality rules
// comply (TestGeneratedSpecsComply covers the whole spec); an
// unconditional personality, a value outside the tier's five, and the
// five folded into one rule (which libcontainer splits into an OR of
// single conditions, but which is not what the tier wrote) are all wider.
func TestLintPersonality(t *testing.T) {
	for _, tier := range []string{"moderate", "permissive"} {
		g := grants(t, tier)
		ok := fresh(t, g)
		ok.Linux.Seccomp.Syscalls = append(ok.Linux.Seccomp.Syscalls, personalityAllow(eq0(0xffffffff)), personalityAllow(eq0(0)))
		if vs := Lint(ok, g); len(vs) != 0 {
			t.Errorf("%s: a copy of the tier's own personality rules is flagged:\n%s", tier, codes(vs))
		}
		for name, rule := range map[string]specs.LinuxSyscall{
			"unconditional":     personalityAllow(),
			"READ_IMPLIES_EXEC": personalityAllow(eq0(0x0400000)),
			"folded":            personalityAllow(eq0(0), eq0(0x0400000)),
			"other argument":    personalityAllow(specs.LinuxSeccompArg{Index: 1, Value: 0, Op: specs.OpEqualTo}),
		} {
			s := fresh(t, g)
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, rule)
			path := "$.linux.seccomp.syscalls[" + strconv.Itoa(len(s.Linux.Seccomp.Syscalls)-1) + "].names[0]"
			got := codes(Lint(s, g))
			if !strings.Contains(got, VSeccompWider+"@"+path) {
				t.Errorf("%s: %s personality not flagged at %s:\n%s", tier, name, path, got)
			}
		}
	}
	// strict allows no personality at all: even the query is wider.
	g := grants(t, "strict")
	s := fresh(t, g)
	s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, personalityAllow(eq0(0xffffffff)))
	if got := codes(Lint(s, g)); !strings.Contains(got, VSeccompWider) {
		t.Errorf("strict: personality query not flagged:\n%s", got)
	}
	// An EPERM rule for personality restricts and is never wider.
	s = fresh(t, grants(t, "moderate"))
	errno := uint(1)
	s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"personality"}, Action: specs.ActErrno, ErrnoRet: &errno})
	if vs := Lint(s, grants(t, "moderate")); len(vs) != 0 {
		t.Errorf("a personality denial is flagged:\n%s", codes(vs))
	}
}

// TestLintMaskedAncestor: a spec that masks a directory above a path the
// tier masks hides it too (strict_plus written against all of /proc/sys
// complies); a spec that masks neither is flagged.
func TestLintMaskedAncestor(t *testing.T) {
	g := grants(t, "strict_plus")
	s := fresh(t, g)
	var keep []string
	for _, p := range s.Linux.MaskedPaths {
		if !strings.HasPrefix(p, "/proc/sys/") {
			keep = append(keep, p)
		}
	}
	s.Linux.MaskedPaths = append(keep, "/proc/sys")
	if vs := Lint(s, g); len(vs) != 0 {
		t.Errorf("masking all of /proc/sys is flagged:\n%s", codes(vs))
	}
	s.Linux.MaskedPaths = keep
	got := codes(Lint(s, g))
	if !strings.Contains(got, VMaskedMissing+"@$.linux.maskedPaths") {
		t.Errorf("unmasked /proc/sys entries not flagged:\n%s", got)
	}
	// A sibling with a common prefix is no ancestor.
	s.Linux.MaskedPaths = append(keep, "/proc/sy")
	if got := codes(Lint(s, g)); !strings.Contains(got, VMaskedMissing) {
		t.Errorf("/proc/sy taken as an ancestor of /proc/sys/...:\n%s", got)
	}
}
