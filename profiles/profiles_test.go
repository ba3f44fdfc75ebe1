package profiles

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuiltinTable(t *testing.T) {
	// The capability table of docs/tiers.md, verbatim.
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
	// Two conditions on one argument: libcontainer ORs them, libseccomp
	// ANDs them. Folding personality's alternatives into one rule must fail.
	one := `{"names": ["personality"], "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]},
        {"names": ["personality"], "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}`
	folded := `{"names": ["personality"], "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}, {"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]}`
	if !strings.Contains(string(syscallsJSON), one) {
		t.Fatal("personality rules not found in syscalls.json")
	}
	if _, err := Decode(tiersJSON, []byte(strings.Replace(string(syscallsJSON), one, folded, 1))); err == nil || !strings.Contains(err.Error(), "two conditions on argument 0") {
		t.Errorf("Decode accepted two conditions on one argument: %v", err)
	}
}

// TestStrictPlusMasking: strict_plus hides /proc/sys subtrees and kernel
// tunables, but nothing a runtime reads while it starts the container;
// the other tiers add no masked paths of their own.
func TestStrictPlusMasking(t *testing.T) {
	var masked []string
	for _, set := range mustTier(t, "strict_plus").MaskedPaths {
		masked = append(masked, set.Paths...)
	}
	all := strings.Join(masked, " ")
	for _, want := range []string{"/proc/sys/vm", "/proc/sys/net", "/proc/sys/kernel/kptr_restrict", "/proc/sys/kernel/yama", "/proc/sys/kernel/core_pattern"} {
		if !strings.Contains(" "+all+" ", " "+want+" ") {
			t.Errorf("strict_plus does not mask %s", want)
		}
	}
	for _, p := range masked {
		for _, r := range RuntimeReads {
			if below(r, p) {
				t.Errorf("strict_plus masks %s, which hides %s", p, r)
			}
		}
	}
	for _, name := range []string{"strict", "moderate", "permissive"} {
		if m := mustTier(t, name).MaskedPaths; len(m) != 0 {
			t.Errorf("%s masks extra paths %v", name, m)
		}
	}
}

func mustTier(t *testing.T, name string) *Tier {
	t.Helper()
	tier, ok := Lookup(name)
	if !ok {
		t.Fatalf("tier %s missing", name)
	}
	return tier
}

// TestDecodeRejectsMasking: each bad masked_paths edit is refused for its
// own reason.
func TestDecodeRejectsMasking(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		// libcontainer reads cap_last_cap after masking: hiding it, or a
		// directory above it, gives a tier no runtime can start.
		{"masks all of /proc/sys", `"paths": ["/proc/sys/abi",`, `"paths": ["/proc/sys", "/proc/sys/abi",`, "hides /proc/sys/kernel/cap_last_cap"},
		{"masks /proc/sys/kernel", `"/proc/sys/kernel/firmware_config",`, `"/proc/sys/kernel",`, "hides /proc/sys/kernel/cap_last_cap"},
		{"masks cap_last_cap", `"/proc/sys/kernel/tainted",`, `"/proc/sys/kernel/cap_last_cap",`, "hides /proc/sys/kernel/cap_last_cap"},
		{"below a masked dir", `"/proc/sys/kernel/tainted",`, `"/proc/sys/vm/overcommit_memory",`, "lies below masked /proc/sys/vm"},
		{"listed twice", `"/proc/sys/kernel/tainted",`, `"/proc/sys/kernel/sysrq",`, "listed twice"},
		{"outside /proc and /sys", `"/proc/sys/kernel/tainted",`, `"/etc/shadow",`, "inside /proc or /sys"},
		{"not clean", `"/proc/sys/kernel/tainted",`, `"/proc/sys/kernel/../tainted",`, "inside /proc or /sys"},
		{"the replaced boolean", `"masked_paths":`, `"mask_proc_sys": true, "masked_paths":`, "unknown field"},
	}
	for _, tc := range cases {
		in := strings.Replace(string(tiersJSON), tc.old, tc.new, 1)
		if in == string(tiersJSON) {
			t.Fatalf("%s: mutation did not apply", tc.name)
		}
		_, err := Decode([]byte(in), syscallsJSON)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// A set must carry a reason and at least one path.
	for name, edit := range map[string]func(set map[string]any){
		"empty why":   func(set map[string]any) { set["why"] = "" },
		"empty paths": func(set map[string]any) { set["paths"] = []any{} },
	} {
		var doc map[string]any
		if err := json.Unmarshal(tiersJSON, &doc); err != nil {
			t.Fatal(err)
		}
		tier := doc["tiers"].([]any)[1].(map[string]any)
		if tier["name"] != "strict_plus" {
			t.Fatalf("tiers[1] is %v", tier["name"])
		}
		edit(tier["masked_paths"].([]any)[0].(map[string]any))
		in, _ := json.Marshal(doc)
		if _, err := Decode(in, syscallsJSON); err == nil || !strings.Contains(err.Error(), "needs paths and a why") {
			t.Errorf("%s: got %v", name, err)
		}
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
