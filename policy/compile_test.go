package policy_test

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
)

func facts() policy.HostFacts {
	f := policy.ReferenceFacts("amd64", host.Syscalls())
	f.Env = map[string]string{"LANG": "C.UTF-8", "GITHUB_TOKEN": "ghp_x", "NODE_ENV": "test", "MY_API_KEY": "k", "HOME": "/root"}
	return f
}

func mustCompile(t *testing.T, tier string, cfg *policy.Config) *policy.Grants {
	t.Helper()
	g, err := policy.Compile(tier, cfg, facts(), nil)
	if err != nil {
		t.Fatalf("Compile(%s): %v", tier, err)
	}
	return g
}

func parse(t *testing.T, y string) *policy.Config {
	t.Helper()
	c, err := policy.ParseConfig([]byte(y))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return c
}

func TestEveryTierCompilesOnBothArches(t *testing.T) {
	for _, tier := range profiles.Builtin().Names() {
		for _, arch := range []string{"amd64", "arm64"} {
			f := facts()
			f.Arch = arch
			g, err := policy.Compile(tier, nil, f, nil)
			if err != nil {
				t.Fatalf("%s/%s: %v", tier, arch, err)
			}
			if g.Tier != tier || g.Arch != arch || !g.Identity.NoNewPrivileges {
				t.Errorf("%s/%s: bad grants header %+v", tier, arch, g)
			}
		}
	}
}

func TestTierAccessMatchesTable(t *testing.T) {
	want := map[string]string{
		"strict":      "deny deny deny deny deny deny",
		"strict_plus": "deny deny deny deny deny deny",
		"moderate":    "filtered scoped deny deny scoped filtered",
		"permissive":  "allow allow allow allow allow allow",
	}
	for tier, w := range want {
		g := mustCompile(t, tier, nil)
		var got []string
		for _, c := range profiles.Capabilities {
			got = append(got, string(g.Access.Get(c)))
		}
		if strings.Join(got, " ") != w {
			t.Errorf("%s: %v, want %s", tier, got, w)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	cases := []struct {
		name, tier, cfg string
		facts           func(*policy.HostFacts)
		code            errcode.Code
		detail          string
	}{
		{name: "unknown tier", tier: "lax", code: errcode.ProfileUnknown},
		{name: "no tier", tier: "", code: errcode.ProfileUnknown},
		{name: "config for another tier", tier: "strict", cfg: "tier: moderate", code: errcode.PolicyConflict},
		{name: "unsupported arch", tier: "strict", facts: func(f *policy.HostFacts) { f.Arch = "mips" }, code: errcode.CompileError},
		{name: "no syscall table", tier: "strict", facts: func(f *policy.HostFacts) { f.Syscalls = nil }, code: errcode.CompileError},
		{name: "widen capability", tier: "strict", cfg: "capabilities: {network_access: allow}", code: errcode.PolicyConflict, detail: "wider"},
		{name: "unknown capability", tier: "strict", cfg: "capabilities: {teleport: deny}", code: errcode.ConfigInvalid},
		{name: "bad level for capability", tier: "strict", cfg: "capabilities: {process_exec: scoped}", code: errcode.ConfigInvalid},
		{name: "write without read", tier: "permissive", cfg: "capabilities: {fs_read: deny}", code: errcode.PolicyConflict, detail: "contradicts"},
		{name: "write outside read", tier: "permissive", cfg: "fs: {read: [{source: /srv/a}], write: [{source: /srv/b}]}", code: errcode.PolicyConflict, detail: "not inside"},
		{name: "write under fs_write deny", tier: "moderate", cfg: "fs: {read: [{source: /srv/a}], write: [{source: /srv/a}]}", code: errcode.PolicyConflict},
		{name: "read under fs_read deny", tier: "strict", cfg: "fs: {read: [{source: /srv/a}]}", code: errcode.PolicyConflict},
		{name: "engine socket", tier: "moderate", cfg: "fs: {read: [{source: /var/run/docker.sock}]}", code: errcode.PolicyConflict, detail: "docker.sock"},
		{name: "ancestor of engine socket", tier: "moderate", cfg: "fs: {read: [{source: /run}]}", code: errcode.PolicyConflict},
		{name: "relative path", tier: "moderate", cfg: "fs: {read: [{source: srv}]}", code: errcode.ConfigInvalid},
		{name: "unclean path", tier: "moderate", cfg: "fs: {read: [{source: /srv/../etc}]}", code: errcode.ConfigInvalid},
		{name: "control char path", tier: "moderate", cfg: "fs: {read: [{source: \"/srv/\\x01\"}]}", code: errcode.ConfigInvalid},
		{name: "destination in /proc", tier: "moderate", cfg: "fs: {read: [{source: /srv, destination: /proc/x}]}", code: errcode.PolicyConflict},
		{name: "rlimit above host", tier: "strict", cfg: "rlimits: {RLIMIT_NOFILE: {soft: 10, hard: 30000}}", code: errcode.PolicyConflict, detail: "host"},
		{name: "rlimit above tier", tier: "strict", cfg: "rlimits: {RLIMIT_NOFILE: {soft: 10, hard: 512}}", code: errcode.PolicyConflict, detail: "tier"},
		{name: "rlimit soft above hard", tier: "strict", cfg: "rlimits: {RLIMIT_NOFILE: {soft: 20, hard: 10}}", code: errcode.ConfigInvalid},
		{name: "unknown rlimit", tier: "strict", cfg: "rlimits: {RLIMIT_WARP: {soft: 1, hard: 1}}", code: errcode.ConfigInvalid},
		{name: "unknown syscall deny", tier: "strict", cfg: "syscalls: {deny: [frobnicate]}", code: errcode.PolicyConflict, detail: "not a syscall"},
		{name: "syscall of other arch", tier: "strict", cfg: "syscalls: {deny: [arm_fadvise64_64]}", code: errcode.PolicyConflict},
		{name: "syscall both ways", tier: "strict", cfg: "syscalls: {deny: [read], allow: [read]}", code: errcode.PolicyConflict},
		{name: "syscall widening", tier: "strict", cfg: "syscalls: {allow: [ptrace]}", code: errcode.PolicyConflict, detail: "ptrace"},
		{name: "memory above tier", tier: "strict", cfg: "limits: {memory: 1Gi}", code: errcode.PolicyConflict},
		{name: "allowlist without filtered net", tier: "strict", cfg: "network: {allow: [\"example.com:443\"]}", code: errcode.PolicyConflict},
		{name: "bad allowlist entry", tier: "moderate", cfg: "network: {allow: [\"example.com\"]}", code: errcode.ConfigInvalid},
		{name: "bad port", tier: "moderate", cfg: "network: {allow: [\"example.com:0\"]}", code: errcode.ConfigInvalid},
		{name: "env under deny", tier: "strict", cfg: "env: {set: {A: b}}", code: errcode.PolicyConflict},
		{name: "secret env allow", tier: "moderate", cfg: "env: {allow: [GITHUB_TOKEN]}", code: errcode.PolicyConflict},
		{name: "bad hostname", tier: "strict", cfg: "hostname: \"a b\"", code: errcode.ConfigInvalid},
		{name: "empty argv0", tier: "strict", cfg: "process: {args: [\"\"]}", code: errcode.ConfigInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := facts()
			if tc.facts != nil {
				tc.facts(&f)
			}
			_, err := policy.Compile(tc.tier, parse(t, tc.cfg), f, nil)
			if got := errcode.Of(err); got != tc.code {
				t.Fatalf("code = %s (%v), want %s", got, err, tc.code)
			}
			if tc.detail != "" && !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("error %q does not mention %q", err, tc.detail)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, y := range []string{"bogus: 1", "version: 2", "limits: {memory: lots}", "limits: {cpus: -1}", "a: [", "tier: strict\n---\ntier: moderate\n"} {
		if _, err := policy.ParseConfig([]byte(y)); errcode.Of(err) != errcode.ConfigInvalid {
			t.Errorf("ParseConfig(%q) = %v, want SANDBOX_CONFIG_INVALID", y, err)
		}
	}
}

func TestNarrowingIsAllowed(t *testing.T) {
	g := mustCompile(t, "permissive", parse(t, `
capabilities: {network_access: deny, fs_write: deny, ipc: deny}
limits: {memory: 64Mi, pids: 10, cpus: "0.5"}
rlimits: {RLIMIT_NOFILE: {soft: 64, hard: 64}}
syscalls: {deny: [ptrace, read]}
`))
	if g.Net.Mode != "none" || !g.FS.RootfsReadonly || g.Isolate.HostIPC || g.IPC.Syscalls {
		t.Errorf("narrowed access not applied: %+v %+v", g.Net, g.FS)
	}
	if g.Limits.MemoryBytes != 64<<20 || g.Limits.Pids != 10 || g.Limits.CPUQuota != 50000 {
		t.Errorf("limits: %+v", g.Limits)
	}
	var denied []string
	for _, grp := range g.Syscalls.Groups {
		if grp.Name == "config-deny" {
			denied = grp.Rules[0].Names
		}
		if grp.Action == "allow" {
			for _, r := range grp.Rules {
				for _, n := range r.Names {
					if n == "ptrace" || n == "read" {
						t.Errorf("%s still allowed by group %s", n, grp.Name)
					}
				}
			}
		}
		if grp.Name == "ipc-sysv" {
			t.Error("ipc narrowed to deny but ipc-sysv still allowed")
		}
	}
	if !reflect.DeepEqual(denied, []string{"ptrace", "read"}) {
		t.Errorf("config-deny = %v", denied)
	}
}

func TestWideningNeedsAuthorization(t *testing.T) {
	cfg := parse(t, "capabilities: {network_access: allow}\nsyscalls: {allow: [ptrace]}")
	if _, err := policy.Compile("strict", cfg, facts(), nil); errcode.Of(err) != errcode.PolicyConflict {
		t.Fatalf("without authorization: %v", err)
	}
	g, err := policy.Compile("strict", cfg, facts(), &policy.Authorization{Label: "incident-42"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Net.Mode != "host" || g.Override == nil || g.Override.Label != "incident-42" || len(g.Override.Widenings) != 2 {
		t.Errorf("override not applied/recorded: %+v %+v", g.Net, g.Override)
	}
	// Narrowing-only configs never record an override, authorized or not.
	g, err = policy.Compile("strict", parse(t, "limits: {pids: 5}"), facts(), &policy.Authorization{Label: "x"})
	if err != nil || g.Override != nil {
		t.Errorf("narrowing recorded an override: %v %+v", err, g.Override)
	}
}

func TestEnvFiltering(t *testing.T) {
	g := mustCompile(t, "moderate", parse(t, "env: {set: {AWS_SECRET_ACCESS_KEY: s, APP: one}, pass: [MY_API_KEY], deny: [NODE_*]}"))
	got := map[string]string{}
	for _, v := range g.Env.Vars {
		got[v.Name] = v.Value
	}
	if got["APP"] != "one" || got["LANG"] != "C.UTF-8" || got["PATH"] == "" {
		t.Errorf("allowed vars missing: %v", got)
	}
	for _, n := range []string{"AWS_SECRET_ACCESS_KEY", "MY_API_KEY", "GITHUB_TOKEN", "NODE_ENV"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s passed the filter", n)
		}
	}
	if !reflect.DeepEqual(g.Env.Dropped, []string{"AWS_SECRET_ACCESS_KEY", "MY_API_KEY", "NODE_ENV"}) {
		t.Errorf("dropped = %v", g.Env.Dropped)
	}
	perm := mustCompile(t, "permissive", parse(t, "env: {pass: [MY_API_KEY]}"))
	if len(perm.Env.Dropped) != 0 || len(perm.Env.Vars) != 3 {
		t.Errorf("permissive env: %+v", perm.Env)
	}
}

func TestRlimitsClampAndNproc(t *testing.T) {
	f := facts()
	f.HardRlimits["RLIMIT_NOFILE"] = 100
	g, err := policy.Compile("strict", nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range g.Limits.Rlimits {
		if r.Type == "RLIMIT_NOFILE" && (r.Hard != 100 || r.Soft != 100) {
			t.Errorf("NOFILE not clamped to host: %+v", r)
		}
	}
	if !strings.Contains(strings.Join(g.Notes, "\n"), "RLIMIT_NOFILE lowered") {
		t.Errorf("clamp not noted: %v", g.Notes)
	}
}

func TestRootlessWithoutCgroupsReportsLimits(t *testing.T) {
	f := facts()
	f.Rootless, f.CgroupLimits, f.UID, f.GID = true, false, 1000, 1000
	g, err := policy.Compile("strict", nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Limits.Cgroups || g.Identity.UIDMap == nil || g.Identity.UIDMap.HostID != 1000 || g.Identity.UID != 0 {
		t.Errorf("rootless identity/limits: %+v %+v", g.Identity, g.Limits)
	}
	un := strings.Join(g.Unenforced, "\n")
	if !strings.Contains(un, "limits.memory") || !strings.Contains(un, "limits.cpus") {
		t.Errorf("unenforced limits not reported: %v", g.Unenforced)
	}
	nproc := false
	for _, r := range g.Limits.Rlimits {
		nproc = nproc || (r.Type == "RLIMIT_NPROC" && r.Hard == 64)
	}
	if !nproc {
		t.Errorf("pids limit not substituted by RLIMIT_NPROC: %+v", g.Limits.Rlimits)
	}
}

// TestDeterministicUnderShuffle is the determinism invariant: the order of lists
// and maps in the input never changes the output bytes.
func TestDeterministicUnderShuffle(t *testing.T) {
	base := `
fs:
  read: [{source: /srv/a}, {source: /srv/b}, {source: /srv/c, destination: /c}]
  write: [{source: /srv/a/out}, {source: /srv/b/tmp}]
capabilities: {network_access: filtered}
network: {allow: ["b.example.com:443", "a.example.com:443", "10.0.0.1:80", "*.c.example:8443"]}
syscalls: {deny: [ptrace, kill, tgkill, getpid]}
env: {set: {Z: "1", A: "2", M: "3"}, pass: [LANG, NODE_ENV], deny: [X_*, Y_*]}
rlimits: {RLIMIT_NOFILE: {soft: 10, hard: 10}, RLIMIT_CORE: {soft: 0, hard: 0}}
`
	ref := parse(t, base)
	want := marshal(t, mustCompileAuth(t, ref))
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		c := parse(t, base)
		shuffle(rng, c.FS.Read)
		shuffle(rng, c.FS.Write)
		shuffle(rng, c.Network.Allow)
		shuffle(rng, c.Syscalls.Deny)
		shuffle(rng, c.Env.Pass)
		shuffle(rng, c.Env.Deny)
		if got := marshal(t, mustCompileAuth(t, c)); got != want {
			t.Fatalf("iteration %d: output differs under shuffled input", i)
		}
	}
}

func mustCompileAuth(t *testing.T, c *policy.Config) *policy.Grants {
	t.Helper()
	g, err := policy.Compile("permissive", c, facts(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func shuffle[T any](rng *rand.Rand, s []T) {
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

func marshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckHostPort(t *testing.T) {
	good := map[string]string{"Example.COM:443": "example.com:443", "*.example.com:1": "*.example.com:1", "[::1]:80": "[::1]:80", "10.0.0.1:8080": "10.0.0.1:8080"}
	for in, want := range good {
		if got, err := policy.CheckHostPort(in); err != nil || got != want {
			t.Errorf("CheckHostPort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"example.com", "example.com:65536", "example.com:08", "ex ample.com:80", "-a.com:80", "a..b:80", "*:80", "a.com:-1"} {
		if _, err := policy.CheckHostPort(in); err == nil {
			t.Errorf("CheckHostPort(%q) accepted", in)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	f := facts()
	cfg, _ := policy.ParseConfig([]byte("fs: {read: [{source: /srv/a}]}\nnetwork: {allow: [\"a.example.com:443\"]}"))
	for i := 0; i < b.N; i++ {
		if _, err := policy.Compile("moderate", cfg, f, nil); err != nil {
			b.Fatal(err)
		}
	}
}
