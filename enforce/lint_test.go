package enforce

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

func grants(t *testing.T, tier string) *policy.Grants {
	t.Helper()
	return grantsWith(t, tier, nil)
}

func grantsWith(t *testing.T, tier string, cfg *policy.Config) *policy.Grants {
	t.Helper()
	g, err := policy.Compile(tier, cfg, policy.ReferenceFacts("amd64", host.Syscalls()), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fresh returns the generated spec, deep-copied through JSON.
func fresh(t *testing.T, g *policy.Grants) *specs.Spec {
	t.Helper()
	s, err := specgen.Generate(g, specgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	var out specs.Spec
	json.Unmarshal(b, &out)
	return &out
}

func codes(vs []Violation) string {
	var c []string
	for _, v := range vs {
		c = append(c, v.Code+"@"+v.Path)
	}
	return strings.Join(c, "\n")
}

func TestGeneratedSpecsComply(t *testing.T) {
	for _, tier := range profiles.Builtin().Names() {
		g := grants(t, tier)
		if vs := Lint(fresh(t, g), g); len(vs) != 0 {
			t.Errorf("%s: generated spec violates its own tier:\n%s", tier, codes(vs))
		}
	}
}

func TestRuncDefaultSpecViolatesStrict(t *testing.T) {
	data, err := os.ReadFile("testdata/runc-spec-default.json")
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	got := codes(Lint(&s, grants(t, "strict")))
	for _, want := range []string{
		VSeccompMissing + "@$.linux.seccomp",
		VCapability + "@$.process.capabilities.bounding[0]",
		VRlimitExcess + "@$.process.rlimits[0]",
		VMaskedMissing + "@$.linux.maskedPaths",
		VCgroupLimit + "@$.linux.resources.memory.limit",
		VUser + "@$.process.user.uid",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in:\n%s", want, got)
		}
	}
}

// Each mutation makes a compliant strict spec violate exactly the rule
// named; the unmutated spec (TestGeneratedSpecsComply) is the allowed case.
func TestEachViolation(t *testing.T) {
	g := grants(t, "strict")
	u := func(v int64) *int64 { return &v }
	cases := []struct {
		code, path string
		mutate     func(*specs.Spec)
	}{
		{VNoNewPrivs, "$.process.noNewPrivileges", func(s *specs.Spec) { s.Process.NoNewPrivileges = false }},
		{VCapability, "$.process.capabilities.ambient[0]", func(s *specs.Spec) { s.Process.Capabilities.Ambient = []string{"CAP_KILL"} }},
		{VUser, "$.process.user.uid", func(s *specs.Spec) { s.Process.User.UID = 0 }},
		{VRlimitMissing, "$.process.rlimits", func(s *specs.Spec) { s.Process.Rlimits = s.Process.Rlimits[1:] }},
		{VEnvNotAllowed, "$.process.env[2]", func(s *specs.Spec) { s.Process.Env = append(s.Process.Env, "FOO=1") }},
		{VEnvSecret, "$.process.env[2]", func(s *specs.Spec) { s.Process.Env = append(s.Process.Env, "GH_TOKEN=1") }},
		{VRootfsWritable, "$.root.readonly", func(s *specs.Spec) { s.Root.Readonly = false }},
		{VNamespaceMissing, "$.linux.namespaces", func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[:1] }},
		{VNamespaceShared, "$.linux.namespaces[1].path", func(s *specs.Spec) { s.Linux.Namespaces[1].Path = "/proc/1/ns/net" }},
		{VSeccompMissing, "$.linux.seccomp", func(s *specs.Spec) { s.Linux.Seccomp = nil }},
		{VSeccompDefault, "$.linux.seccomp.defaultAction", func(s *specs.Spec) { s.Linux.Seccomp.DefaultAction = specs.ActAllow }},
		{VSeccompWider, "$.linux.seccomp.syscalls[0].names[0]", func(s *specs.Spec) { s.Linux.Seccomp.Syscalls[0].Names[0] = "ptrace" }},
		{VSeccompArch, "$.linux.seccomp.architectures[1]", func(s *specs.Spec) {
			s.Linux.Seccomp.Architectures = append(s.Linux.Seccomp.Architectures, specs.ArchX86)
		}},
		{VSeccompFlag, "$.linux.seccomp.flags[0]", func(s *specs.Spec) { s.Linux.Seccomp.Flags = []specs.LinuxSeccompFlag{specs.LinuxSeccompFlagSpecAllow} }},
		{VMountForbidden, "$.mounts[6].source", func(s *specs.Spec) { s.Mounts = append(s.Mounts, bind("/var/run/docker.sock", "/sock", "ro")) }},
		{VMountHostPath, "$.mounts[6].source", func(s *specs.Spec) { s.Mounts = append(s.Mounts, bind("/home", "/home", "ro", "nosuid", "noexec")) }},
		{VMountPropagation, "$.linux.rootfsPropagation", func(s *specs.Spec) { s.Linux.RootfsPropagation = "shared" }},
		{VSysWritable, "$.mounts[4].options", func(s *specs.Spec) { s.Mounts[4].Options = []string{"nosuid"} }},
		{VMountOptions, "$.mounts[5].options", func(s *specs.Spec) { s.Mounts[5].Options = []string{"nosuid", "size=1k"} }},
		{VMaskedMissing, "$.linux.maskedPaths", func(s *specs.Spec) { s.Linux.MaskedPaths = s.Linux.MaskedPaths[1:] }},
		{VReadonlyMissing, "$.linux.readonlyPaths", func(s *specs.Spec) { s.Linux.ReadonlyPaths = nil }},
		{VCgroupLimit, "$.linux.resources.pids.limit", func(s *specs.Spec) { s.Linux.Resources.Pids.Limit = u(100000) }},
		{VDevice, "$.linux.devices[0]", func(s *specs.Spec) { s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/kmsg", Type: "c"}} }},
		{VSysctl, "$.linux.sysctl.kernel.domainname", func(s *specs.Spec) { s.Linux.Sysctl = map[string]string{"kernel.domainname": "x"} }},
		{VHook, "$.hooks.createRuntime[0]", func(s *specs.Spec) { s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sh"}}} }},
		{VUserNSRoot, "$.linux.uidMappings[0]", func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 0, Size: 1}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			s := fresh(t, g)
			tc.mutate(s)
			vs := Lint(s, g)
			found := false
			for _, v := range vs {
				if v.Code == tc.code && v.Path == tc.path {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s at %s, got:\n%s", tc.code, tc.path, codes(vs))
			}
		})
	}
}

func bind(src, dst string, opts ...string) specs.Mount {
	return specs.Mount{Source: src, Destination: dst, Type: "bind", Options: append([]string{"rbind"}, opts...)}
}

func TestGrantedBindMountComplies(t *testing.T) {
	cfg, _ := policy.ParseConfig([]byte("fs: {read: [{source: /srv/data, destination: /data}]}"))
	g, err := policy.Compile("moderate", cfg, policy.ReferenceFacts("amd64", host.Syscalls()), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := fresh(t, g)
	s.Mounts = append(s.Mounts, bind("/srv/data/sub", "/sub", "ro", "nosuid", "nodev", "noexec"))
	if vs := Lint(s, g); len(vs) != 0 {
		t.Errorf("a read-only mount inside a granted path should comply:\n%s", codes(vs))
	}
	s.Mounts[len(s.Mounts)-1].Options = []string{"rbind", "rw", "nosuid", "noexec"}
	if vs := Lint(s, g); !strings.Contains(codes(vs), VMountWritable) {
		t.Errorf("writable mount of a read-only grant not flagged:\n%s", codes(vs))
	}
}
