package enforce

import (
	"fmt"
	"path"
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
	in, ref *specs.Spec
	g       *policy.Grants
	out     *specs.Spec
	changes []string
	refused []Violation
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
	return &Result{Spec: e.out, Changes: e.changes}, nil
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
	out.Cwd = in.Cwd
	out.Terminal = in.Terminal
	out.ConsoleSize = in.ConsoleSize
	out.ApparmorProfile = in.ApparmorProfile
	out.SelinuxLabel = in.SelinuxLabel
	if in.OOMScoreAdj != nil && *in.OOMScoreAdj >= 0 {
		v := *in.OOMScoreAdj
		out.OOMScoreAdj = &v
	}
	// Identity: keep the image's user unless it is root where the tier runs
	// unprivileged.
	if in.User.UID == 0 && e.g.Identity.UID != 0 && !e.g.Rootless {
		e.change("process.user: uid 0 replaced by %d:%d", e.g.Identity.UID, e.g.Identity.GID)
	} else {
		out.User = in.User
	}
	e.env()
	e.capabilities()
	e.rlimits()
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
		bind := m.Type == "bind" || hasOpt(m.Options, "bind", "rbind")
		switch {
		case bind:
			e.bind(p, m, dst, forbidden)
		case m.Type == "tmpfs":
			opts := withOpts(m.Options, "nosuid", "nodev")
			if e.g.Exec.InitialOnly {
				opts = withOpts(opts, "noexec")
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
	if engineFiles[dst] {
		e.out.Mounts = append(e.out.Mounts, specs.Mount{Destination: dst, Type: "bind", Source: m.Source, Options: append(opts, "ro")})
		if !hasOpt(m.Options, "ro") {
			e.change("mounts: engine file %s made read-only", dst)
		}
		return
	}
	grant, ok := grantFor(e.g, src)
	if !ok {
		e.refuse(p+".source", "host path %s is not granted by tier %s (fs_read=%s)", m.Source, e.g.Tier, e.g.Access.FSRead)
		return
	}
	if grant.Writable && !hasOpt(m.Options, "ro") {
		opts = append(opts, "rw")
	} else {
		opts = append(opts, "ro")
		if !hasOpt(m.Options, "ro") {
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
	e.resources(in.Resources)
	if e.in.Hooks != nil && e.g.Access.ProcessExec != profiles.Allow {
		e.refuse("$.hooks", "OCI hooks run on the host outside the sandbox; tier %s allows none", e.g.Tier)
	} else if e.in.Hooks != nil {
		e.out.Hooks = e.in.Hooks
	}
}

func (e *enforcer) resources(in *specs.LinuxResources) {
	out := e.out.Linux.Resources
	if in == nil || !e.g.Limits.Cgroups {
		return
	}
	if in.Memory != nil && in.Memory.Limit != nil && *in.Memory.Limit > 0 && out.Memory != nil && *in.Memory.Limit < *out.Memory.Limit {
		v := *in.Memory.Limit
		out.Memory.Limit = &v
		if out.Memory.Swap != nil {
			out.Memory.Swap = &v
		}
	}
	if in.Pids != nil && in.Pids.Limit != nil && *in.Pids.Limit > 0 && out.Pids != nil && *in.Pids.Limit < *out.Pids.Limit {
		v := *in.Pids.Limit
		out.Pids.Limit = &v
	}
	if c := in.CPU; c != nil && c.Quota != nil && c.Period != nil && *c.Quota > 0 && *c.Period > 0 && out.CPU != nil &&
		*c.Quota*int64(*out.CPU.Period) < *out.CPU.Quota*int64(*c.Period) {
		q, p := *c.Quota, *c.Period
		out.CPU.Quota, out.CPU.Period = &q, &p
	}
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

func withOpts(opts []string, add ...string) []string {
	out := append([]string{}, opts...)
	for _, a := range add {
		if !containsString(out, a) {
			out = append(out, a)
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
	sort.Strings(e.changes)
	return e.out.Process, e.changes, nil
}
