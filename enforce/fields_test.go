package enforce

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// handled says what Enforce does with every field of an incoming spec. A
// field the runtime-spec module adds fails TestEveryFieldHandled until it
// is given a line here (and code): nothing is dropped silently.
var handled = map[string]string{
	"Spec.Version":     "the tier's",
	"Spec.Process":     "see Process",
	"Spec.Root":        "path kept; read-only unless the tier allows writes",
	"Spec.Hostname":    "kept",
	"Spec.Domainname":  "kept",
	"Spec.Mounts":      "kept, narrowed (read-only, nosuid, nodev, noexec) or refused; the tier's own replace runtime mounts",
	"Spec.Hooks":       "refused below permissive",
	"Spec.Annotations": "merged, the tier's win",
	"Spec.Linux":       "see Linux",
	"Spec.Solaris":     "kept (another platform's)",
	"Spec.Windows":     "kept (another platform's)",
	"Spec.VM":          "kept (another platform's)",
	"Spec.ZOS":         "kept (another platform's)",
	"Spec.FreeBSD":     "kept (another platform's)",

	"Process.Terminal":        "kept",
	"Process.ConsoleSize":     "kept",
	"Process.User":            "kept, or uid 0 replaced where the tier runs unprivileged (umask kept, extra gids dropped and recorded)",
	"Process.Args":            "kept",
	"Process.CommandLine":     "kept (the runtime refuses it: Windows only)",
	"Process.Env":             "filtered by the tier's env filter, drops recorded",
	"Process.Cwd":             "kept",
	"Process.Capabilities":    "intersected; inheritable and ambient cleared",
	"Process.Rlimits":         "lowered to the tier's",
	"Process.NoNewPrivileges": "the tier's (always true)",
	"Process.ApparmorProfile": "kept",
	"Process.OOMScoreAdj":     "kept if not negative; a negative one recorded and not applied",
	"Process.Scheduler":       "kept, or refused for a realtime policy or negative nice",
	"Process.SelinuxLabel":    "kept",
	"Process.IOPriority":      "kept, or refused for the realtime class",
	"Process.ExecCPUAffinity": "kept",

	"Linux.UIDMappings":       "kept with an engine's user namespace",
	"Linux.GIDMappings":       "kept with an engine's user namespace",
	"Linux.Sysctl":            "kept if namespaced to the sandbox, else refused",
	"Linux.Resources":         "intersected (see resources)",
	"Linux.CgroupsPath":       "kept",
	"Linux.Namespaces":        "the tier's; shared host ones refused, joins refused, user and time namespaces kept",
	"Linux.Devices":           "refused",
	"Linux.NetDevices":        "kept at network_access=allow, else refused",
	"Linux.Seccomp":           "replaced by the tier's, recorded",
	"Linux.RootfsPropagation": "shared refused, else the tier's rprivate",
	"Linux.MaskedPaths":       "union",
	"Linux.ReadonlyPaths":     "union",
	"Linux.MountLabel":        "kept",
	"Linux.IntelRdt":          "kept",
	"Linux.MemoryPolicy":      "kept",
	"Linux.Personality":       "kept",
	"Linux.TimeOffsets":       "kept with the time namespace",

	"LinuxResources.Devices":        "the tier's, recorded",
	"LinuxResources.Memory":         "see LinuxMemory",
	"LinuxResources.CPU":            "see LinuxCPU",
	"LinuxResources.Pids":           "the lower of spec and tier",
	"LinuxResources.BlockIO":        "kept",
	"LinuxResources.HugepageLimits": "kept",
	"LinuxResources.Network":        "kept",
	"LinuxResources.Rdma":           "kept",
	"LinuxResources.Unified":        "refused",

	"LinuxMemory.Limit":             "the lower of spec and tier",
	"LinuxMemory.Reservation":       "kept up to the limit",
	"LinuxMemory.Swap":              "the tier's, recorded when it differs",
	"LinuxMemory.Kernel":            "kept (libcontainer warns and ignores it)",
	"LinuxMemory.KernelTCP":         "kept (libcontainer warns and ignores it)",
	"LinuxMemory.Swappiness":        "kept",
	"LinuxMemory.DisableOOMKiller":  "refused when true",
	"LinuxMemory.UseHierarchy":      "kept",
	"LinuxMemory.CheckBeforeUpdate": "kept",

	"LinuxCPU.Shares":          "kept",
	"LinuxCPU.Quota":           "the lower share of a CPU, with Period",
	"LinuxCPU.Burst":           "kept up to the quota",
	"LinuxCPU.Period":          "with Quota",
	"LinuxCPU.RealtimeRuntime": "refused",
	"LinuxCPU.RealtimePeriod":  "refused",
	"LinuxCPU.Cpus":            "kept",
	"LinuxCPU.Mems":            "kept",
	"LinuxCPU.Idle":            "kept",
}

func TestEveryFieldHandled(t *testing.T) {
	var fields []string
	for _, v := range []any{specs.Spec{}, specs.Process{}, specs.Linux{}, specs.LinuxResources{}, specs.LinuxMemory{}, specs.LinuxCPU{}} {
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			fields = append(fields, rt.Name()+"."+rt.Field(i).Name)
		}
	}
	var missing, stale []string
	for _, f := range fields {
		if handled[f] == "" {
			missing = append(missing, f)
		}
	}
	for f := range handled {
		found := false
		for _, x := range fields {
			found = found || x == f
		}
		if !found {
			stale = append(stale, f)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 || len(stale) > 0 {
		t.Errorf("fields Enforce does not say it handles: %v; table entries for no field: %v", missing, stale)
	}
}

func ptr[T any](v T) *T { return &v }

// TestEnforceKeepsHarmlessFields: what only narrows, labels or lowers the
// process's own priority arrives in the enforced spec unchanged.
func TestEnforceKeepsHarmlessFields(t *testing.T) {
	for _, tier := range []string{"strict", "moderate", "permissive"} {
		in := engineSpec()
		p := in.Process
		p.User.Umask = ptr(uint32(0o027))
		p.OOMScoreAdj = ptr(100)
		p.Scheduler = &specs.Scheduler{Policy: specs.SchedBatch, Nice: 5}
		p.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_BE, Priority: 6}
		p.ExecCPUAffinity = &specs.CPUAffinity{Initial: "0", Final: "0"}
		p.ConsoleSize = &specs.Box{Height: 30, Width: 100}
		l := in.Linux
		l.MountLabel = "system_u:object_r:container_file_t:s0"
		l.Personality = &specs.LinuxPersonality{Domain: specs.PerLinux32}
		l.MemoryPolicy = &specs.LinuxMemoryPolicy{Mode: "MPOL_BIND", Nodes: "0"}
		l.IntelRdt = &specs.LinuxIntelRdt{ClosID: "c1"}
		l.Namespaces = append(l.Namespaces, specs.LinuxNamespace{Type: specs.TimeNamespace})
		l.TimeOffsets = map[string]specs.LinuxTimeOffset{"monotonic": {Secs: 7}}
		r := l.Resources
		r.BlockIO = &specs.LinuxBlockIO{Weight: ptr(uint16(300))}
		r.HugepageLimits = []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 0}}
		r.Network = &specs.LinuxNetwork{ClassID: ptr(uint32(7))}
		r.Rdma = map[string]specs.LinuxRdma{"mlx": {HcaHandles: ptr(uint32(1))}}
		r.CPU = &specs.LinuxCPU{Shares: ptr(uint64(512)), Cpus: "0", Mems: "0", Idle: ptr(int64(1))}
		r.Memory = &specs.LinuxMemory{Limit: ptr(int64(64 << 20)), Reservation: ptr(int64(32 << 20)), Swappiness: ptr(uint64(10))}
		res, err := Enforce(in, grants(t, tier))
		if err != nil {
			t.Fatalf("%s: %v", tier, err)
		}
		o := res.Spec
		same := func(name string, a, b any) {
			t.Helper()
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: %s = %v, want %v as given", tier, name, b, a)
			}
		}
		same("process.user.umask", p.User.Umask, o.Process.User.Umask)
		same("process.oomScoreAdj", p.OOMScoreAdj, o.Process.OOMScoreAdj)
		same("process.scheduler", p.Scheduler, o.Process.Scheduler)
		same("process.ioPriority", p.IOPriority, o.Process.IOPriority)
		same("process.execCPUAffinity", p.ExecCPUAffinity, o.Process.ExecCPUAffinity)
		same("process.consoleSize", p.ConsoleSize, o.Process.ConsoleSize)
		same("linux.mountLabel", l.MountLabel, o.Linux.MountLabel)
		same("linux.personality", l.Personality, o.Linux.Personality)
		same("linux.memoryPolicy", l.MemoryPolicy, o.Linux.MemoryPolicy)
		same("linux.intelRdt", l.IntelRdt, o.Linux.IntelRdt)
		same("linux.timeOffsets", l.TimeOffsets, o.Linux.TimeOffsets)
		same("time namespace", true, hasNamespace(o, specs.TimeNamespace))
		or := o.Linux.Resources
		same("blockIO", r.BlockIO, or.BlockIO)
		same("hugepageLimits", r.HugepageLimits, or.HugepageLimits)
		same("network", r.Network, or.Network)
		same("rdma", r.Rdma, or.Rdma)
		same("cpu.shares", r.CPU.Shares, or.CPU.Shares)
		same("cpu.cpus", r.CPU.Cpus, or.CPU.Cpus)
		same("memory.limit", r.Memory.Limit, or.Memory.Limit)
		same("memory.reservation", r.Memory.Reservation, or.Memory.Reservation)
		same("memory.swappiness", r.Memory.Swappiness, or.Memory.Swappiness)
		if vs := Lint(o, grants(t, tier)); len(vs) != 0 {
			t.Errorf("%s: the enforced spec does not lint:\n%s", tier, codes(vs))
		}
	}
}

// TestEnforceRefusesPrivilegedFields: each field that would be applied
// with privileges the tier does not grant is refused by Enforce (with its
// JSON path) and flagged by Lint; the paired harmless value passes.
func TestEnforceRefusesPrivilegedFields(t *testing.T) {
	cases := []struct {
		name, path string
		bad, ok    func(*specs.Spec)
	}{
		{"realtime scheduler", "$.process.scheduler",
			func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedFIFO, Priority: 99} },
			func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedIdle} }},
		{"negative nice", "$.process.scheduler",
			func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: -10} },
			func(s *specs.Spec) { s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedOther, Nice: 10} }},
		{"realtime I/O", "$.process.ioPriority.class",
			func(s *specs.Spec) { s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT} },
			func(s *specs.Spec) { s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_IDLE} }},
		{"OOM killer off", "$.linux.resources.memory.disableOOMKiller",
			func(s *specs.Spec) { s.Linux.Resources.Memory = &specs.LinuxMemory{DisableOOMKiller: ptr(true)} },
			func(s *specs.Spec) { s.Linux.Resources.Memory = &specs.LinuxMemory{DisableOOMKiller: ptr(false)} }},
		{"realtime CPU", "$.linux.resources.cpu.realtimeRuntime",
			func(s *specs.Spec) { s.Linux.Resources.CPU = &specs.LinuxCPU{RealtimeRuntime: ptr(int64(950000))} },
			func(s *specs.Spec) { s.Linux.Resources.CPU = &specs.LinuxCPU{Shares: ptr(uint64(100))} }},
		{"unified", "$.linux.resources.unified",
			func(s *specs.Spec) { s.Linux.Resources.Unified = map[string]string{"memory.max": "max"} },
			func(s *specs.Spec) {}},
		{"host interface", "$.linux.netDevices",
			func(s *specs.Spec) { s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {}} },
			func(s *specs.Spec) {}},
	}
	g := grants(t, "strict")
	for _, tc := range cases {
		bad := engineSpec()
		tc.bad(bad)
		_, err := Enforce(bad, g)
		if err == nil || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: Enforce = %v, want a refusal at %s", tc.name, err, tc.path)
		}
		if vs := Lint(bad, g); !strings.Contains(codes(vs)+pathsOf(vs), tc.path) {
			t.Errorf("%s: Lint does not flag %s:\n%s", tc.name, tc.path, codes(vs))
		}
		good := engineSpec()
		tc.ok(good)
		if _, err := Enforce(good, g); err != nil {
			t.Errorf("%s: paired harmless value refused: %v", tc.name, err)
		}
	}
	// Exec'd processes are held to the same rule.
	p := engineSpec().Process
	p.Scheduler = &specs.Scheduler{Policy: specs.SchedRR, Priority: 50}
	if _, _, err := EnforceProcess(p, g); err == nil {
		t.Error("EnforceProcess accepted a realtime scheduler")
	}
}

// TestEnforceRecordsWhatItLowers: values above the tier's are lowered, and
// every such change is on the record.
func TestEnforceRecordsWhatItLowers(t *testing.T) {
	in := engineSpec()
	in.Process.OOMScoreAdj = ptr(-999)
	in.Process.User = specs.User{UID: 0, GID: 0, AdditionalGids: []uint32{10}}
	in.Linux.Resources.Memory = &specs.LinuxMemory{Limit: ptr(int64(8 << 30)), Swap: ptr(int64(-1))}
	in.Linux.Resources.Pids.Limit = ptr(int64(100000))
	in.Linux.Resources.CPU = &specs.LinuxCPU{Quota: ptr(int64(800000)), Period: ptr(uint64(100000))}
	in.Linux.Resources.Devices = []specs.LinuxDeviceCgroup{{Allow: true, Access: "rwm"}}
	in.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow}
	res, err := Enforce(in, grants(t, "strict"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(res.Changes, "\n")
	for _, want := range []string{"oomScoreAdj: -999 not applied", "additionalGids: [10] dropped", "memory.limit: 8589934592 lowered",
		"memory.swap: -1 replaced", "pids.limit: 100000 lowered", "cpu: quota 800000/100000 lowered", "devices: replaced", "linux.seccomp: replaced"} {
		if !strings.Contains(all, want) {
			t.Errorf("change %q not recorded:\n%s", want, all)
		}
	}
	if res.Spec.Process.OOMScoreAdj != nil || *res.Spec.Linux.Resources.Pids.Limit != 64 {
		t.Errorf("not lowered: %v %v", res.Spec.Process.OOMScoreAdj, *res.Spec.Linux.Resources.Pids.Limit)
	}
}

func pathsOf(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.Path + "\n")
	}
	return b.String()
}
