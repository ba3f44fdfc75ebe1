package enforce

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/profiles"
	"github.com/sbxrun/sbxrun/specgen"
)

// Result is the outcome of enforcing a tier on an incoming spec.
type Result struct {
	Spec    *specs.Spec
	Changes []string
	// Unenforced are limits the spec asked for that cannot be applied here
	// (rootless without cgroup delegation), each with why.
	Unenforced []string
}

// engineFiles are per-container files that engines (podman, containerd
// clients) bind-mount from their own state: harmless read-only, and the
// workload misbehaves without them.
var engineFiles = map[string]bool{
	"/etc/hosts": true, "/etc/resolv.conf": true, "/etc/hostname": true, "/run/.containerenv": true,
}

// runtimeOwned are destinations whose mounts the tier's spec provides; an
// incoming mount there is replaced by the tier's version.
var runtimeOwned = []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup", "/tmp"}

type enforcer struct {
	in, ref    *specs.Spec
	g          *policy.Grants
	out        *specs.Spec
	changes    []string
	unenforced []string
	refused    []Violation
}

func (e *enforcer) change(format string, args ...any) {
	e.changes = append(e.changes, fmt.Sprintf(format, args...))
}

func (e *enforcer) refuse(path, format string, args ...any) {
	e.refused = append(e.refused, Violation{Code: "ENFORCE_REFUSED", Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Enforce makes an incoming spec comply with g. It keeps the workload's
// identity — process args, cwd, terminal, filtered env, hostname, rootfs,
// annotations, the mounts the tier allows — and replaces or intersects every
// security-relevant field with the tier's. What cannot be made compliant
// (host PID or network namespace where the tier needs its own, a bind mount
// the tier does not grant, an engine socket, shared propagation, extra
// devices, hooks, non-namespaced sysctls) is refused: the error is
// SANDBOX_SPEC_NONCOMPLIANT naming each JSON path and the tier. As a last
// check the result is linted against g, so a gap in the rewrite fails
// closed instead of running.
func Enforce(in *specs.Spec, g *policy.Grants) (*Result, error) {
	if in == nil || in.Process == nil || in.Root == nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "spec has no process or root")
	}
	ref, err := specgen.Generate(g, specgen.Options{RootPath: in.Root.Path})
	if err != nil {
		return nil, err
	}
	e := &enforcer{in: in, ref: ref, g: g, out: ref}
	e.process()
	e.root()
	e.namespaces()
	e.mounts()
	e.linux()
	e.annotations()
	if len(e.refused) > 0 {
		return nil, noncompliant(g, e.refused)
	}
	if vs := Lint(e.out, g); len(vs) > 0 {
		return nil, noncompliant(g, vs)
	}
	sort.Strings(e.changes)
	return &Result{Spec: e.out, Changes: e.changes, Unenforced: e.unenforced}, nil
}

func noncompliant(g *policy.Grants, vs []Violation) error {
	d := make([]string, len(vs))
	for i, v := range vs {
		d[i] = v.String()
	}
	return &errcode.Error{Code: errcode.SpecNoncompliant,
		Msg:     fmt.Sprintf("spec cannot be made to comply with tier %s", g.Tier),
		Details: d}
}

func (e *enforcer) process() {
	in, out := e.in.Process, e.out.Process
	out.Args = append([]string{}, in.Args...)
	out.CommandLine = in.CommandLine
	out.Cwd = in.Cwd
	out.Terminal = in.Terminal
	out.ConsoleSize = in.ConsoleSize
	out.ApparmorProfile = in.ApparmorProfile
	out.SelinuxLabel = in.SelinuxLabel
	out.ExecCPUAffinity = in.ExecCPUAffinity
	if in.OOMScoreAdj != nil {
		if v := *in.OOMScoreAdj; v >= 0 {
			out.OOMScoreAdj = &v
		} else {
			// The runtime writes the score with its own privileges; a
			// negative one would shield the sandbox from the OOM killer at
			// the host's expense.
			e.change("process.oomScoreAdj: %d not applied (a sandbox is not shielded from the OOM killer)", v)
		}
	}
	// Identity: keep the image's user unless it is root where the tier runs
	// unprivileged.
	if in.User.UID == 0 && e.g.Identity.UID != 0 && !e.g.Rootless {
		e.change("process.user: uid 0 replaced by %d:%d", e.g.Identity.UID, e.g.Identity.GID)
		if len(in.User.AdditionalGids) > 0 {
			e.change("process.user.additionalGids: %v dropped with uid 0", in.User.AdditionalGids)
		}
		out.User.Umask = in.User.Umask
		out.User.Username = in.User.Username
	} else {
		out.User = in.User
	}
	e.scheduling()
	e.env()
	e.capabilities()
	e.rlimits()
}

// scheduling keeps the process's scheduler and I/O priority where they
// only lower its own priority. The container's init applies both before it
// drops its capabilities, so a realtime policy, a negative nice value or
// the realtime I/O class would be granted with privileges (CAP_SYS_NICE,
// CAP_SYS_ADMIN) the tier does not give, and could starve the host: refused.
func (e *enforcer) scheduling() {
	in, out := e.in.Process, e.out.Process
	if s := in.Scheduler; s != nil {
		switch {
		case s.Policy != specs.SchedOther && s.Policy != specs.SchedBatch && s.Policy != specs.SchedIdle:
			e.refuse("$.process.scheduler.policy", "%s is a realtime policy; tier %s grants no CAP_SYS_NICE", s.Policy, e.g.Tier)
		case s.Nice < 0:
			e.refuse("$.process.scheduler.nice", "nice %d raises the priority; tier %s grants no CAP_SYS_NICE", s.Nice, e.g.Tier)
		default:
			c := *s
			c.Flags = slices.Clone(s.Flags)
			out.Scheduler = &c
		}
	}
	if p := in.IOPriority; p != nil {
		if p.Class == specs.IOPRIO_CLASS_RT {
			e.refuse("$.process.ioPriority.class", "the realtime I/O class can starve the host's I/O; tier %s does not allow it", e.g.Tier)
		} else {
			c := *p
			out.IOPriority = &c
		}
	}
}

func (e *enforcer) env() {
	env, dropped := e.g.Env.Filter.Apply(e.in.Process.Env)
	e.out.Process.Env = env
	if len(dropped) > 0 {
		sort.Strings(dropped)
		e.change("process.env: dropped %s (env_access=%s)", strings.Join(dropped, ", "), e.g.Env.Filter.Mode)
	}
}

func (e *enforcer) capabilities() {
	in := e.in.Process.Capabilities
	allowed := map[string]bool{}
	for _, c := range e.g.Identity.Capabilities {
		allowed[c] = true
	}
	var dropped []string
	keep := func(set []string) []string {
		var out []string
		for _, c := range set {
			if allowed[c] {
				out = append(out, c)
			} else if !containsString(dropped, c) {
				dropped = append(dropped, c)
			}
		}
		return out
	}
	if in == nil {
		e.out.Process.Capabilities = &specs.LinuxCapabilities{}
		return
	}
	e.out.Process.Capabilities = &specs.LinuxCapabilities{
		Bounding: keep(in.Bounding), Effective: keep(in.Effective), Permitted: keep(in.Permitted),
	}
	for _, c := range append(append([]string{}, in.Inheritable...), in.Ambient...) {
		if !containsString(dropped, c) {
			dropped = append(dropped, c)
		}
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		e.change("process.capabilities: dropped %s", strings.Join(dropped, " "))
	}
}

func (e *enforcer) rlimits() {
	tier := map[string]specs.POSIXRlimit{}
	for _, r := range e.out.Process.Rlimits {
		tier[r.Type] = r
	}
	var out []specs.POSIXRlimit
	seen := map[string]bool{}
	for _, r := range e.in.Process.Rlimits {
		seen[r.Type] = true
		if t, ok := tier[r.Type]; ok && (r.Hard > t.Hard || r.Soft > t.Hard) {
			e.change("process.rlimits: %s %d/%d lowered to %d/%d", r.Type, r.Soft, r.Hard, t.Soft, t.Hard)
			r = t
		}
		out = append(out, r)
	}
	for _, t := range e.out.Process.Rlimits {
		if !seen[t.Type] {
			out = append(out, t)
		}
	}
	e.out.Process.Rlimits = out
}

func (e *enforcer) root() {
	e.out.Root.Readonly = e.g.FS.RootfsReadonly || e.in.Root.Readonly
	if !e.in.Root.Readonly && e.out.Root.Readonly {
		e.change("root.readonly: set (fs_write=%s)", e.g.Access.FSWrite)
	}
	e.out.Hostname = e.in.Hostname
	e.out.Domainname = e.in.Domainname
	// Sections for other platforms are not Linux's to enforce; a Linux
	// runtime ignores them, as the runtime specification says.
	e.out.Solaris, e.out.Windows, e.out.VM, e.out.ZOS, e.out.FreeBSD = e.in.Solaris, e.in.Windows, e.in.VM, e.in.ZOS, e.in.FreeBSD
}

func (e *enforcer) namespaces() {
	var inNS []specs.LinuxNamespace
	if e.in.Linux != nil {
		inNS = e.in.Linux.Namespaces
	}
	has := map[specs.LinuxNamespaceType]int{}
	for i, ns := range inNS {
		has[ns.Type] = i
	}
	for _, want := range e.out.Linux.Namespaces {
		i, ok := has[want.Type]
		switch {
		case !ok && (want.Type == specs.PIDNamespace || want.Type == specs.NetworkNamespace || want.Type == specs.IPCNamespace):
			e.refuse("$.linux.namespaces", "the spec shares the host %s namespace; tier %s requires its own", want.Type, e.g.Tier)
		case ok && inNS[i].Path != "" && want.Type == specs.NetworkNamespace:
			// The engine configured a network there; the tier allows none
			// of it, so the sandbox gets a fresh namespace with loopback.
			e.change("linux.namespaces[%d]: network namespace %s replaced by an empty one (network_access=%s)", i, inNS[i].Path, e.g.Access.NetworkAccess)
		case ok && inNS[i].Path != "":
			e.refuse(fmt.Sprintf("$.linux.namespaces[%d].path", i), "joining the existing %s namespace %s is not allowed by tier %s", want.Type, inNS[i].Path, e.g.Tier)
		}
	}
	// Where the tier allows the host's network or IPC namespace, what the
	// engine asked for (a namespace of its own, or one it set up and joins)
	// is never more than that, so it is kept as given; dropping it would
	// silently widen the container to the host's.
	for _, ns := range inNS {
		if (ns.Type == specs.NetworkNamespace && e.g.Isolate.HostNetwork) || (ns.Type == specs.IPCNamespace && e.g.Isolate.HostIPC) {
			e.out.Linux.Namespaces = append(e.out.Linux.Namespaces, ns)
		}
	}
	// A time namespace of its own only isolates more; joining one is
	// refused like any other join.
	if i, ok := has[specs.TimeNamespace]; ok {
		if inNS[i].Path != "" {
			e.refuse(fmt.Sprintf("$.linux.namespaces[%d].path", i), "joining the existing time namespace %s is not allowed by tier %s", inNS[i].Path, e.g.Tier)
		} else {
			e.out.Linux.Namespaces = append(e.out.Linux.Namespaces, inNS[i])
			e.out.Linux.TimeOffsets = e.in.Linux.TimeOffsets
		}
	}
	// A user namespace the engine asked for (rootless podman) is kept with
	// its mappings, unless they map to host root.
	if i, ok := has[specs.UserNamespace]; ok && e.in.Linux != nil {
		if inNS[i].Path != "" {
			e.refuse(fmt.Sprintf("$.linux.namespaces[%d].path", i), "joining an existing user namespace is not allowed by tier %s", e.g.Tier)
			return
		}
		if !hasNamespace(e.out, specs.UserNamespace) {
			e.out.Linux.Namespaces = append(e.out.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		}
		e.out.Linux.UIDMappings = e.in.Linux.UIDMappings
		e.out.Linux.GIDMappings = e.in.Linux.GIDMappings
	}
}

// grantFor returns the grant covering host path src: a declared path, or
// any path at fs_read=allow (writable only at fs_write=allow).
func grantFor(g *policy.Grants, src string) (policy.PathGrant, bool) {
	for _, p := range g.FS.Paths {
		if policy.Within(src, p.Source) {
			return p, true
		}
	}
	if g.Access.FSRead == profiles.Allow {
		return policy.PathGrant{Source: src, Writable: g.Access.FSWrite == profiles.Allow}, true
	}
	return policy.PathGrant{}, false
}

func (e *enforcer) mounts() {
	forbidden := e.g.FS.Forbidden
	for i, m := range e.in.Mounts {
		p := fmt.Sprintf("$.mounts[%d]", i)
		dst := path.Clean(m.Destination)
		if containsString(runtimeOwned, dst) {
			continue // the tier's own /proc, /dev, /sys, /tmp… replace it
		}
		if hasOpt(m.Options, "shared", "rshared") {
			e.refuse(p+".options", "shared propagation would leak mounts between the sandbox and the host")
			continue
		}
		for _, r := range []string{"/proc", "/sys", "/dev"} {
			if policy.Within(dst, r) {
				e.refuse(p+".destination", "%s is under %s, which the tier sets up itself", dst, r)
			}
		}
		bind := IsBind(m)
		switch {
		case bind:
			e.bind(p, m, dst, forbidden)
		case m.Type == "tmpfs":
			// The hardening goes last: options apply in order, so a later
			// "suid" would undo an earlier "nosuid".
			opts := append(withoutOpts(m.Options, "nosuid", "nodev", "noexec"), "nosuid", "nodev")
			if e.g.Exec.InitialOnly {
				opts = append(opts, "noexec")
			} else if optOn(m.Options, "noexec", "exec") {
				opts = append(opts, "noexec")
			}
			e.out.Mounts = append(e.out.Mounts, specs.Mount{Destination: dst, Type: "tmpfs", Source: "tmpfs", Options: opts})
		default:
			e.refuse(p+".type", "a %s filesystem at %s is not allowed by tier %s", m.Type, dst, e.g.Tier)
		}
	}
}

func (e *enforcer) bind(p string, m specs.Mount, dst string, forbidden []string) {
	src := path.Clean(m.Source)
	if hit := exposes(src, forbidden); len(hit) > 0 {
		e.refuse(p+".source", "%s exposes %s, which no tier may mount", m.Source, strings.Join(hit, ", "))
		return
	}
	opts := []string{"rbind", "rprivate", "nosuid", "nodev"}
	if e.g.Exec.InitialOnly {
		opts = append(opts, "noexec")
	}
	// An engine's per-container file passes read-only whatever the tier;
	// anything else at its destination is an ordinary host path.
	if IsEngineFile(m) {
		e.out.Mounts = append(e.out.Mounts, specs.Mount{Destination: dst, Type: "bind", Source: m.Source, Options: append(opts, "ro")})
		if !optOn(m.Options, "ro", "rw") {
			e.change("mounts: engine file %s made read-only", dst)
		}
		return
	}
	grant, ok := grantFor(e.g, src)
	if !ok {
		e.refuse(p+".source", "host path %s is not granted by tier %s (fs_read=%s)", m.Source, e.g.Tier, e.g.Access.FSRead)
		return
	}
	if grant.Writable && !optOn(m.Options, "ro", "rw") {
		opts = append(opts, "rw")
	} else {
		opts = append(opts, "ro")
		if !optOn(m.Options, "ro", "rw") {
			e.change("mounts: %s made read-only (fs_write=%s)", dst, e.g.Access.FSWrite)
		}
	}
	e.out.Mounts = append(e.out.Mounts, specs.Mount{Destination: dst, Type: "bind", Source: m.Source, Options: opts})
}

// namespacedSysctl reports whether a sysctl only affects a namespace that
// is not the host's (net.* with a network namespace, IPC limits with an IPC
// namespace, whether new or set up by the engine and joined by path).
func namespacedSysctl(key string, s *specs.Spec) bool {
	switch {
	case strings.HasPrefix(key, "net."):
		return notHostNamespace(s, specs.NetworkNamespace, "net")
	case strings.HasPrefix(key, "fs.mqueue.") || key == "kernel.msgmax" || key == "kernel.msgmnb" || key == "kernel.msgmni" ||
		key == "kernel.sem" || key == "kernel.shmall" || key == "kernel.shmmax" || key == "kernel.shmmni" || key == "kernel.shm_rmid_forced":
		return notHostNamespace(s, specs.IPCNamespace, "ipc")
	}
	return false
}

// notHostNamespace: the spec has a namespace of type t that is not the
// host init process's own (/proc/1/ns/NAME).
func notHostNamespace(s *specs.Spec, t specs.LinuxNamespaceType, name string) bool {
	if s.Linux == nil {
		return false
	}
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == t && ns.Path != "/proc/1/ns/"+name && ns.Path != "/proc/self/ns/"+name {
			return true
		}
	}
	return false
}

func (e *enforcer) linux() {
	in := e.in.Linux
	if in == nil {
		return
	}
	for i, d := range in.Devices {
		e.refuse(fmt.Sprintf("$.linux.devices[%d]", i), "device %s is not allowed by tier %s", d.Path, e.g.Tier)
	}
	if in.RootfsPropagation == "shared" || in.RootfsPropagation == "rshared" {
		e.refuse("$.linux.rootfsPropagation", "%s propagation would leak sandbox mounts into the host", in.RootfsPropagation)
	}
	for k, v := range in.Sysctl {
		if !namespacedSysctl(k, e.out) {
			e.refuse("$.linux.sysctl."+k, "sysctl %s is not namespaced to the sandbox", k)
			continue
		}
		if e.out.Linux.Sysctl == nil {
			e.out.Linux.Sysctl = map[string]string{}
		}
		e.out.Linux.Sysctl[k] = v
	}
	e.out.Linux.MaskedPaths = union(e.out.Linux.MaskedPaths, in.MaskedPaths)
	e.out.Linux.ReadonlyPaths = union(e.out.Linux.ReadonlyPaths, in.ReadonlyPaths)
	e.out.Linux.CgroupsPath = in.CgroupsPath
	// Labels, the execution domain, NUMA policy and cache allocation change
	// nothing the tier decides: kept as given.
	e.out.Linux.MountLabel, e.out.Linux.Personality = in.MountLabel, in.Personality
	e.out.Linux.MemoryPolicy, e.out.Linux.IntelRdt = in.MemoryPolicy, in.IntelRdt
	if len(in.NetDevices) > 0 && !e.g.Isolate.HostNetwork {
		e.refuse("$.linux.netDevices", "moving a host network interface into the sandbox is not allowed by tier %s (network_access=%s)", e.g.Tier, e.g.Access.NetworkAccess)
	} else {
		e.out.Linux.NetDevices = in.NetDevices
	}
	if in.Seccomp != nil {
		e.change("linux.seccomp: replaced by tier %s's filter", e.g.Tier)
	}
	e.resources(in.Resources)
	if e.in.Hooks != nil && e.g.Access.ProcessExec != profiles.Allow {
		e.refuse("$.hooks", "OCI hooks run on the host outside the sandbox; tier %s allows none", e.g.Tier)
	} else if e.in.Hooks != nil {
		e.out.Hooks = e.in.Hooks
	}
}

// resources intersects the spec's cgroup resources with the tier's: a
// ceiling the tier sets (memory, memory+swap, CPU quota, pids) takes the
// lower of the two, recorded when the spec asked for more; what only
// restricts (shares, cpusets, block I/O, hugepages, network class, rdma,
// reservations) is kept; what could loosen the sandbox and cannot be
// compared (realtime CPU time, a disabled OOM killer, cgroup v2 unified
// keys) is refused. The device rules are the tier's. Where no cgroup limit
// can be applied (rootless without delegation), each limit the spec asked
// for is reported as not enforced.
func (e *enforcer) resources(in *specs.LinuxResources) {
	if in == nil {
		return
	}
	if !e.g.Limits.Cgroups {
		cp := &specs.Spec{Linux: &specs.Linux{Resources: copyResources(in)}}
		e.unenforced = append(e.unenforced, StripCgroupLimits(cp)...)
		return
	}
	out := e.out.Linux.Resources
	for _, d := range in.Devices {
		if d.Allow {
			e.change("linux.resources.devices: replaced by tier %s's rules (deny all but the runtime's standard devices)", e.g.Tier)
			break
		}
	}
	if m := in.Memory; m != nil {
		om := out.Memory
		if m.Limit != nil && *m.Limit > 0 {
			if *m.Limit < *om.Limit {
				v := *m.Limit
				om.Limit = &v
				if om.Swap != nil {
					om.Swap = &v
				}
			} else if *m.Limit > *om.Limit {
				e.change("linux.resources.memory.limit: %d lowered to tier %s's %d", *m.Limit, e.g.Tier, *om.Limit)
			}
		}
		if m.Swap != nil && om.Swap != nil && *m.Swap != *om.Swap {
			e.change("linux.resources.memory.swap: %d replaced by %d (tier %s allows no swap)", *m.Swap, *om.Swap, e.g.Tier)
		}
		if m.Reservation != nil && *m.Reservation > 0 {
			if *m.Reservation <= *om.Limit {
				v := *m.Reservation
				om.Reservation = &v
			} else {
				e.change("linux.resources.memory.reservation: %d dropped, above the memory limit %d", *m.Reservation, *om.Limit)
			}
		}
		om.Swappiness, om.Kernel, om.KernelTCP, om.UseHierarchy, om.CheckBeforeUpdate = m.Swappiness, m.Kernel, m.KernelTCP, m.UseHierarchy, m.CheckBeforeUpdate
		if m.DisableOOMKiller != nil && *m.DisableOOMKiller {
			e.refuse("$.linux.resources.memory.disableOOMKiller", "a sandbox at its memory limit is killed, not left hanging")
		}
	}
	if c := in.CPU; c != nil {
		oc := out.CPU
		if c.Quota != nil && c.Period != nil && *c.Quota > 0 && *c.Period > 0 {
			if *c.Quota*int64(*oc.Period) < *oc.Quota*int64(*c.Period) {
				q, p := *c.Quota, *c.Period
				oc.Quota, oc.Period = &q, &p
			} else if *c.Quota*int64(*oc.Period) > *oc.Quota*int64(*c.Period) {
				e.change("linux.resources.cpu: quota %d/%d lowered to tier %s's %d/%d", *c.Quota, *c.Period, e.g.Tier, *oc.Quota, *oc.Period)
			}
		}
		oc.Shares, oc.Cpus, oc.Mems, oc.Idle = c.Shares, c.Cpus, c.Mems, c.Idle
		if c.Burst != nil && *c.Burst > 0 {
			if int64(*c.Burst) <= *oc.Quota {
				b := *c.Burst
				oc.Burst = &b
			} else {
				e.change("linux.resources.cpu.burst: %d dropped, above the quota %d it borrows against", *c.Burst, *oc.Quota)
			}
		}
		if (c.RealtimeRuntime != nil && *c.RealtimeRuntime != 0) || (c.RealtimePeriod != nil && *c.RealtimePeriod != 0) {
			e.refuse("$.linux.resources.cpu.realtimeRuntime", "realtime CPU time lets a sandbox starve the host")
		}
	}
	if in.Pids != nil && in.Pids.Limit != nil && *in.Pids.Limit > 0 {
		if *in.Pids.Limit < *out.Pids.Limit {
			v := *in.Pids.Limit
			out.Pids.Limit = &v
		} else if *in.Pids.Limit > *out.Pids.Limit {
			e.change("linux.resources.pids.limit: %d lowered to tier %s's %d", *in.Pids.Limit, e.g.Tier, *out.Pids.Limit)
		}
	}
	out.BlockIO, out.HugepageLimits, out.Network, out.Rdma = in.BlockIO, in.HugepageLimits, in.Network, in.Rdma
	if len(in.Unified) > 0 {
		e.refuse("$.linux.resources.unified", "cgroup v2 keys cannot be checked against tier %s; use the typed fields", e.g.Tier)
	}
}

func copyResources(r *specs.LinuxResources) *specs.LinuxResources {
	c := *r
	return &c
}

func (e *enforcer) annotations() {
	ann := map[string]string{}
	for k, v := range e.in.Annotations {
		ann[k] = v
	}
	for k, v := range e.out.Annotations {
		ann[k] = v
	}
	e.out.Annotations = ann
}

// exposes returns the forbidden paths a bind of src would make visible:
// those at or below src, and src itself if it lies below one.
func exposes(src string, forbidden []string) []string {
	var hit []string
	for _, f := range forbidden {
		if policy.Within(src, f) || policy.Within(f, src) {
			hit = append(hit, f)
		}
	}
	return hit
}

func union(a, b []string) []string {
	out := append([]string{}, a...)
	for _, x := range b {
		if !containsString(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func withoutOpts(opts []string, drop ...string) []string {
	var out []string
	for _, o := range opts {
		if !containsString(drop, o) {
			out = append(out, o)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// EnforceProcess applies g to a process started in an existing sandbox
// (exec): capabilities intersected, no_new_privileges set, env filtered,
// rlimits lowered, root replaced where the tier runs unprivileged.
func EnforceProcess(p *specs.Process, g *policy.Grants) (*specs.Process, []string, error) {
	ref, err := specgen.Generate(g, specgen.Options{})
	if err != nil {
		return nil, nil, err
	}
	e := &enforcer{in: &specs.Spec{Process: p}, ref: ref, g: g, out: ref}
	e.process()
	if len(e.refused) > 0 {
		return nil, nil, noncompliant(g, e.refused)
	}
	sort.Strings(e.changes)
	return e.out.Process, e.changes, nil
}
