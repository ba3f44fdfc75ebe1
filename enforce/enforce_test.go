package enforce

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/host"
	"github.com/sbxrun/sbxrun/policy"
)

// engineSpec is shaped like what podman hands a runtime: root, a joined
// network namespace, engine files, its own /dev/shm, broad capabilities,
// a namespaced sysctl, a pids limit.
func engineSpec() *specs.Spec {
	pids := int64(2048)
	caps := []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_KILL", "CAP_NET_RAW", "CAP_SYS_CHROOT", "CAP_SETUID"}
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/var/lib/containers/x/merged"},
		Process: &specs.Process{
			Args: []string{"sh", "-c", "echo hi"}, Cwd: "/",
			Env:          []string{"PATH=/usr/bin:/bin", "HOSTNAME=c1", "container=podman", "TERM=xterm", "AWS_SECRET_ACCESS_KEY=s", "LANG=C"},
			Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps, Ambient: []string{"CAP_KILL"}},
			Rlimits:      []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}},
		},
		Hostname: "c1",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev/shm", Type: "bind", Source: "/var/lib/containers/x/shm", Options: []string{"bind", "rw"}},
			{Destination: "/etc/hosts", Type: "bind", Source: "/var/lib/containers/x/hosts", Options: []string{"bind", "rw"}},
			{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace, Path: "/run/netns/cni-1"},
				{Type: specs.IPCNamespace}, {Type: specs.UTSNamespace}, {Type: specs.MountNamespace}},
			Sysctl:    map[string]string{"net.ipv4.ping_group_range": "0 0"},
			Resources: &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &pids}},
		},
		Annotations: map[string]string{"io.podman.annotations.autoremove": "TRUE"},
	}
}

func TestEnforceEngineSpecUnderStrict(t *testing.T) {
	g := grants(t, "strict")
	res, err := Enforce(engineSpec(), g)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Spec
	if vs := Lint(s, g); len(vs) != 0 {
		t.Fatalf("enforced spec violates strict:\n%s", codes(vs))
	}
	if s.Process.User.UID != 65534 || len(s.Process.Capabilities.Bounding) != 0 || !s.Process.NoNewPrivileges || !s.Root.Readonly {
		t.Errorf("identity not replaced: %+v %+v", s.Process.User, s.Process.Capabilities)
	}
	if s.Root.Path != "/var/lib/containers/x/merged" || s.Hostname != "c1" || strings.Join(s.Process.Args, " ") != "sh -c echo hi" {
		t.Errorf("workload identity lost: %v %v %v", s.Root.Path, s.Hostname, s.Process.Args)
	}
	env := strings.Join(s.Process.Env, " ")
	if env != "PATH=/usr/bin:/bin HOSTNAME=c1 container=podman TERM=xterm" {
		t.Errorf("env = %s", env)
	}
	for _, ns := range s.Linux.Namespaces {
		if ns.Path != "" {
			t.Errorf("namespace %s still joins %s", ns.Type, ns.Path)
		}
	}
	if s.Linux.Sysctl["net.ipv4.ping_group_range"] != "0 0" {
		t.Error("namespaced sysctl dropped")
	}
	if s.Annotations["io.podman.annotations.autoremove"] != "TRUE" || s.Annotations["dev.sbx.tier"] != "strict" {
		t.Errorf("annotations: %v", s.Annotations)
	}
	var hosts, shmTier bool
	for _, m := range s.Mounts {
		if m.Destination == "/etc/hosts" && hasOpt(m.Options, "ro") && hasOpt(m.Options, "noexec") {
			hosts = true
		}
		if m.Destination == "/dev/shm" && m.Type == "tmpfs" {
			shmTier = true
		}
	}
	if !hosts || !shmTier {
		t.Errorf("engine file read-only %v, tier /dev/shm %v: %+v", hosts, shmTier, s.Mounts)
	}
	for _, nofile := range s.Process.Rlimits {
		if nofile.Type == "RLIMIT_NOFILE" && nofile.Hard != 256 {
			t.Errorf("NOFILE not lowered: %+v", nofile)
		}
	}
	changes := strings.Join(res.Changes, "\n")
	for _, want := range []string{"AWS_SECRET_ACCESS_KEY", "uid 0 replaced", "network namespace /run/netns/cni-1 replaced", "dropped CAP_", "NOFILE 1024/1024 lowered"} {
		if !strings.Contains(changes, want) {
			t.Errorf("change %q not reported:\n%s", want, changes)
		}
	}
}

func TestEnforceRefusals(t *testing.T) {
	g := grants(t, "strict")
	cases := []struct {
		name, path string
		mutate     func(*specs.Spec)
	}{
		{"host pid", "$.linux.namespaces", func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[1:] }},
		{"join pid", "$.linux.namespaces[0].path", func(s *specs.Spec) { s.Linux.Namespaces[0].Path = "/proc/1/ns/pid" }},
		{"socket", "$.mounts[4].source", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/s", Type: "bind", Source: "/run/podman/podman.sock"})
		}},
		{"host dir", "$.mounts[4].source", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: "bind", Source: "/srv/data"})
		}},
		{"shared", "$.mounts[3].options", func(s *specs.Spec) { s.Mounts[3].Options = []string{"rshared"} }},
		{"overlay", "$.mounts[4].type", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/x", Type: "overlay", Source: "overlay"})
		}},
		{"under /sys", "$.mounts[4].destination", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/sys/kernel", Type: "tmpfs", Source: "tmpfs"})
		}},
		{"device", "$.linux.devices[0]", func(s *specs.Spec) { s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/sda"}} }},
		{"sysctl", "$.linux.sysctl.kernel.core_pattern", func(s *specs.Spec) { s.Linux.Sysctl["kernel.core_pattern"] = "|/x" }},
		{"hooks", "$.hooks", func(s *specs.Spec) { s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "/x"}}} }},
		{"rootfs shared", "$.linux.rootfsPropagation", func(s *specs.Spec) { s.Linux.RootfsPropagation = "rshared" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := engineSpec()
			tc.mutate(s)
			_, err := Enforce(s, g)
			if errcode.Of(err) != errcode.SpecNoncompliant || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "strict") {
				t.Errorf("got %v, want a refusal at %s", err, tc.path)
			}
		})
	}
}

func TestEnforceKeepsGrantedBindAndWidensNothing(t *testing.T) {
	cfg, _ := policy.ParseConfig([]byte("fs: {read: [{source: /srv/data}]}"))
	g, err := policy.Compile("moderate", cfg, policy.ReferenceFacts("amd64", nil), nil)
	if err == nil {
		t.Fatal("compile without a resolver must fail closed")
	}
	g = grantsWith(t, "moderate", cfg)
	s := engineSpec()
	s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: "bind", Source: "/srv/data/sub", Options: []string{"rbind", "rw"}})
	res, err := Enforce(s, g)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range res.Spec.Mounts {
		if m.Destination == "/data" {
			found = hasOpt(m.Options, "ro") && hasOpt(m.Options, "noexec")
		}
	}
	if !found || !strings.Contains(strings.Join(res.Changes, "\n"), "/data made read-only") {
		t.Errorf("granted bind not kept read-only: %+v %v", res.Spec.Mounts, res.Changes)
	}
	// Lower incoming limits are kept (intersection), higher ones lowered.
	small := int64(10)
	s = engineSpec()
	s.Linux.Resources.Pids.Limit = &small
	res, _ = Enforce(s, g)
	if *res.Spec.Linux.Resources.Pids.Limit != 10 {
		t.Errorf("lower pids limit not kept: %d", *res.Spec.Linux.Resources.Pids.Limit)
	}
}

func TestEnforceProcess(t *testing.T) {
	g := grants(t, "strict")
	p, changes, err := EnforceProcess(&specs.Process{Args: []string{"sh"}, Cwd: "/", Env: []string{"PATH=/bin", "GH_TOKEN=x"},
		Capabilities: &specs.LinuxCapabilities{Effective: []string{"CAP_SYS_ADMIN"}}}, g)
	if err != nil {
		t.Fatal(err)
	}
	if p.User.UID != 65534 || len(p.Capabilities.Effective) != 0 || !p.NoNewPrivileges || strings.Join(p.Env, " ") != "PATH=/bin" || len(changes) == 0 {
		t.Errorf("exec process not enforced: %+v %v", p, changes)
	}
}

func TestStripCgroupLimitsAndPropagation(t *testing.T) {
	s := engineSpec()
	mem := int64(1 << 20)
	s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &mem}
	out := StripCgroupLimits(s)
	if len(out) != 2 || s.Linux.Resources.Pids != nil || s.Linux.Resources.Memory != nil {
		t.Fatalf("strip: %v %+v", out, s.Linux.Resources)
	}
	nproc := false
	for _, r := range s.Process.Rlimits {
		nproc = nproc || (r.Type == "RLIMIT_NPROC" && r.Hard == 2048)
	}
	if !nproc {
		t.Errorf("pids not substituted by RLIMIT_NPROC: %+v", s.Process.Rlimits)
	}
	s.Mounts[3].Options = []string{"rbind", "rshared"}
	s.Linux.RootfsPropagation = "shared"
	if ch := NoSharedPropagation(s); len(ch) != 2 || s.Mounts[3].Options[1] != "rslave" || s.Linux.RootfsPropagation != "rslave" {
		t.Errorf("propagation: %v %+v %s", ch, s.Mounts[3], s.Linux.RootfsPropagation)
	}
}

// Under permissive (host network allowed) the engine's own network
// namespace is kept: enforcement never widens a container to the host's.
func TestEnforceKeepsEngineNetworkWhereHostIsAllowed(t *testing.T) {
	g := grants(t, "permissive")
	res, err := Enforce(engineSpec(), g)
	if err != nil {
		t.Fatal(err)
	}
	joined := false
	for _, ns := range res.Spec.Linux.Namespaces {
		joined = joined || (ns.Type == specs.NetworkNamespace && ns.Path == "/run/netns/cni-1")
	}
	if !joined {
		t.Errorf("engine network namespace dropped: %+v", res.Spec.Linux.Namespaces)
	}
	if vs := Lint(res.Spec, g); len(vs) != 0 {
		t.Errorf("lint:\n%s", codes(vs))
	}
}

func BenchmarkEnforce(b *testing.B) {
	g, err := policy.Compile("strict", nil, policy.ReferenceFacts("amd64", host.Syscalls()), nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := Enforce(engineSpec(), g); err != nil {
			b.Fatal(err)
		}
	}
}
