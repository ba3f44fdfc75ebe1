package profiles

import (
	"strings"
	"testing"
)

func TestBuiltinTable(t *testing.T) {
	// The bd-3ua7 capability table, verbatim.
	want := map[string]string{
		"strict":      "0 deny deny deny deny deny deny",
		"strict_plus": "1 deny deny deny deny deny deny",
		"moderate":    "2 filtered scoped deny deny scoped filtered",
		"permissive":  "3 allow allow allow allow allow allow",
	}
	cat := Builtin()
	if got := strings.Join(cat.Names(), ","); got != "strict,strict_plus,moderate,permissive" {
		t.Fatalf("tier order = %s", got)
	}
	for name, w := range want {
		tier, ok := Lookup(name)
		if !ok {
			t.Fatalf("tier %s missing", name)
		}
		parts := []string{string(rune('0' + tier.Level))}
		for _, c := range Capabilities {
			parts = append(parts, string(tier.Access(c)))
		}
		if got := strings.Join(parts, " "); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := map[string]func(string) string{
		"unknown field": func(s string) string { return strings.Replace(s, `"version": 1,`, `"version": 1, "extra": true,`, 1) },
		"bad access for exec": func(s string) string {
			return strings.Replace(s, `"process_exec": {"access": "deny"`, `"process_exec": {"access": "scoped"`, 1)
		},
		"duplicate level": func(s string) string { return strings.Replace(s, `"level": 1,`, `"level": 0,`, 1) },
		"unknown syscall group": func(s string) string {
			return strings.Replace(s, `"syscall_groups": ["memory"`, `"syscall_groups": ["nope"`, 1)
		},
		"missing why": func(s string) string {
			return strings.Replace(s, `"why": "Untrusted code must not reach any host or the internet; a private network namespace holds only loopback."`, `"why": ""`, 1)
		},
		"trailing data": func(s string) string { return s + "{}" },
		"not monotonic by level": func(s string) string {
			return strings.Replace(s, `"network_access": {"access": "allow"`, `"network_access": {"access": "deny"`, 1)
		},
		"unknown rlimit": func(s string) string { return strings.Replace(s, `"type": "RLIMIT_CORE"`, `"type": "RLIMIT_WARP"`, 1) },
	}
	for name, mutate := range cases {
		in := mutate(string(tiersJSON))
		if in == string(tiersJSON) {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if _, err := Decode([]byte(in), syscallsJSON); err == nil {
			t.Errorf("%s: Decode accepted bad tier data", name)
		}
	}
	badSys := strings.Replace(string(syscallsJSON), `"action": "EAFNOSUPPORT"`, `"action": "EWHATEVER"`, 1)
	if _, err := Decode(tiersJSON, []byte(badSys)); err == nil {
		t.Error("Decode accepted an unknown errno action")
	}
}

func TestRank(t *testing.T) {
	if r, ok := Rank(NetworkAccess, Filtered); !ok || r != 1 {
		t.Errorf("Rank(network, filtered) = %d, %v", r, ok)
	}
	if _, ok := Rank(ProcessExec, Scoped); ok {
		t.Error("process_exec must not know scoped")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(tiersJSON, syscallsJSON)
	f.Add([]byte(`{"version":1,"tiers":[]}`), []byte(`{"version":1,"groups":[]}`))
	f.Fuzz(func(t *testing.T, tiers, sys []byte) {
		c, err := Decode(tiers, sys)
		if err != nil {
			return
		}
		// Anything accepted must satisfy the invariants Decode promises.
		for i := 1; i < len(c.Tiers); i++ {
			if c.Tiers[i].Level <= c.Tiers[i-1].Level {
				t.Fatalf("levels not strictly ordered: %v", c.Names())
			}
		}
	})
}
