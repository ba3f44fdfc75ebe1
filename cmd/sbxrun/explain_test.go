package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainTierDetails: explain shows what the compiled grants hold:
// personality's allowed values under moderate (none under strict),
// strict_plus's masked /proc/sys entries, and runsc as not enforced.
func TestExplainTierDetails(t *testing.T) {
	env := dirs(t)
	const personality = "personality only when arg0 == 0x0 or arg0 == 0x8 or arg0 == 0x20000 or arg0 == 0x20008 or arg0 == 0xffffffff"
	mod := sbx(t, env, "", "explain", "--tier", "moderate")
	if mod.code != 0 || !strings.Contains(mod.stdout, personality) {
		t.Errorf("explain moderate: %d\n%s%s", mod.code, mod.stdout, mod.stderr)
	}
	strict := sbx(t, env, "", "explain", "--tier", "strict")
	if strict.code != 0 || strings.Contains(strict.stdout, "personality") || strings.Contains(strict.stdout, "Masked for this tier") || strings.Contains(strict.stdout, "runsc") {
		t.Errorf("explain strict: %d\n%s%s", strict.code, strict.stdout, strict.stderr)
	}
	sp := sbx(t, env, "", "explain", "--tier", "strict_plus")
	for _, want := range []string{"Masked for this tier: /proc/sys/abi", "/proc/sys/kernel/kptr_restrict", "Not enforced by the spec alone: hardened_backend=runsc: not used"} {
		if !strings.Contains(sp.stdout, want) {
			t.Errorf("explain strict_plus lacks %q:\n%s", want, sp.stdout)
		}
	}
	if strings.Contains(sp.stdout, "runs under") || strings.Contains(sp.stdout, "when it is installed") {
		t.Errorf("explain strict_plus still claims runsc is used:\n%s", sp.stdout)
	}
}

// TestLintUnconditionalPersonality: a moderate spec whose seccomp allows
// personality outright fails lint; the generated one passes
// (TestSpecPipesIntoLint).
func TestLintUnconditionalPersonality(t *testing.T) {
	env := dirs(t)
	spec := sbx(t, env, "", "spec", "--tier", "moderate", "-o", "-")
	if spec.code != 0 {
		t.Fatalf("spec: %+v", spec)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(spec.stdout), &s); err != nil {
		t.Fatal(err)
	}
	sc := s["linux"].(map[string]any)["seccomp"].(map[string]any)
	sc["syscalls"] = append(sc["syscalls"].([]any), map[string]any{"names": []string{"personality"}, "action": "SCMP_ACT_ALLOW"})
	wide, _ := json.Marshal(s)
	lint := sbx(t, env, string(wide), "lint", "--tier", "moderate", "-")
	if lint.code == 0 || !strings.Contains(lint.stdout+lint.stderr, "LINT_SECCOMP_WIDER") || !strings.Contains(lint.stdout+lint.stderr, "personality") {
		t.Errorf("lint of unconditional personality: %d\n%s%s", lint.code, lint.stdout, lint.stderr)
	}
}
