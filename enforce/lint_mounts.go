package enforce

import (
	"fmt"
	"path"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/policy"
)

func hasOpt(opts []string, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

// optOn reports whether a mount flag ends up set: the kernel (and
// libcontainer) apply options in order, so the last of on ("nosuid") and
// off ("suid") wins, and neither means off.
func optOn(opts []string, on, off string) bool {
	set := false
	for _, o := range opts {
		switch o {
		case on:
			set = true
		case off:
			set = false
		}
	}
	return set
}

// IsBind reports whether a mount is a bind mount (by type or option).
func IsBind(m specs.Mount) bool {
	return m.Type == "bind" || hasOpt(m.Options, "bind", "rbind")
}

// IsEngineFile reports whether a bind mount is an engine's per-container
// file: one of the known destinations, from a source of the same name
// (podman's .../userdata/hosts, containerd's .../sandboxes/ID/resolv.conf).
// Anything else at those destinations is an ordinary host path.
func IsEngineFile(m specs.Mount) bool {
	dst := path.Clean(m.Destination)
	return engineFiles[dst] && path.Base(path.Clean(m.Source)) == path.Base(dst)
}

func sameMount(a, b specs.Mount) bool {
	if a.Destination != b.Destination || a.Type != b.Type || a.Source != b.Source || len(a.Options) != len(b.Options) {
		return false
	}
	x := append([]string{}, a.Options...)
	y := append([]string{}, b.Options...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func (l *linter) mounts() {
	expected := l.ref.Mounts
	forbidden := l.g.FS.Forbidden
	for i, m := range l.s.Mounts {
		known := false
		for _, e := range expected {
			if sameMount(m, e) {
				known = true
			}
		}
		if known {
			continue
		}
		p := fmt.Sprintf("$.mounts[%d]", i)
		if hasOpt(m.Options, "shared", "rshared") {
			l.add(VMountPropagation, p+".options", "%s propagation lets mounts cross between the sandbox and the host", "shared")
		}
		bind := IsBind(m)
		switch {
		case bind:
			l.bindMount(p, m, forbidden)
		case m.Type == "sysfs" || m.Type == "cgroup" || m.Type == "cgroup2" || m.Destination == "/sys":
			if !optOn(m.Options, "ro", "rw") {
				l.add(VSysWritable, p+".options", "%s at %s must be read-only: a writable /sys or cgroupfs reconfigures the host kernel", m.Type, m.Destination)
			}
		case m.Type == "proc":
			if m.Destination != "/proc" {
				l.add(VMountHostPath, p+".destination", "a second procfs at %s escapes maskedPaths", m.Destination)
			}
		case m.Type == "tmpfs" || m.Type == "devpts" || m.Type == "mqueue":
			if m.Type == "tmpfs" && (!optOn(m.Options, "nosuid", "suid") || !optOn(m.Options, "nodev", "dev") && m.Destination != "/dev") {
				l.add(VMountOptions, p+".options", "tmpfs %s needs nosuid and nodev", m.Destination)
			}
			if l.g.Exec.InitialOnly && m.Type == "tmpfs" && m.Destination != "/dev" && !optOn(m.Options, "noexec", "exec") {
				l.add(VMountOptions, p+".options", "writable tmpfs %s without noexec is an exec staging area; process_exec is deny", m.Destination)
			}
		default:
			l.add(VMountHostPath, p+".type", "%s filesystem at %s is not granted by tier %s", m.Type, m.Destination, l.g.Tier)
		}
	}
	if l.s.Linux != nil {
		if rp := l.s.Linux.RootfsPropagation; rp == "shared" || rp == "rshared" {
			l.add(VMountPropagation, "$.linux.rootfsPropagation", "%s propagation leaks sandbox mounts into the host mount namespace", rp)
		}
	}
}

func (l *linter) bindMount(p string, m specs.Mount, forbidden []string) {
	src := path.Clean(m.Source)
	if hit := exposes(src, forbidden); len(hit) > 0 {
		l.add(VMountForbidden, p+".source", "%s exposes %s, which no tier may mount", m.Source, strings.Join(hit, ", "))
		return
	}
	if IsEngineFile(m) && optOn(m.Options, "ro", "rw") && optOn(m.Options, "nosuid", "suid") {
		return // an engine's per-container file, read-only
	}
	grant, ok := grantFor(l.g, src)
	if !ok {
		l.add(VMountHostPath, p+".source", "host path %s is not granted by tier %s (fs_read=%s)", m.Source, l.g.Tier, l.g.Access.FSRead)
		return
	}
	if !optOn(m.Options, "ro", "rw") && !grant.Writable {
		l.add(VMountWritable, p+".options", "%s is granted read-only", m.Source)
	}
	if !optOn(m.Options, "nosuid", "suid") {
		l.add(VMountOptions, p+".options", "bind mount %s needs nosuid", m.Source)
	}
	if l.g.Exec.InitialOnly && !optOn(m.Options, "noexec", "exec") {
		l.add(VMountOptions, p+".options", "bind mount %s needs noexec: process_exec is deny", m.Source)
	}
}

func (l *linter) paths() {
	var masked, ro []string
	if l.s.Linux != nil {
		masked, ro = l.s.Linux.MaskedPaths, l.s.Linux.ReadonlyPaths
	}
	has := func(list []string, p string) bool {
		for _, x := range list {
			if x == p {
				return true
			}
		}
		return false
	}
	// A path is hidden when it or a directory above it is masked.
	hidden := func(p string) bool {
		for _, m := range masked {
			if m != "/" && policy.Within(p, m) {
				return true
			}
		}
		return false
	}
	for _, p := range l.g.Isolate.MaskedPaths {
		if !hidden(p) {
			l.add(VMaskedMissing, "$.linux.maskedPaths", "%s must be masked", p)
		}
	}
	for _, p := range l.g.Isolate.ReadonlyPaths {
		if !has(ro, p) && !hidden(p) {
			l.add(VReadonlyMissing, "$.linux.readonlyPaths", "%s must be read-only", p)
		}
	}
}

func (l *linter) resources() {
	var r *specs.LinuxResources
	if l.s.Linux != nil {
		r = l.s.Linux.Resources
	}
	if r != nil {
		for i, d := range r.Devices {
			if d.Allow && (d.Type == "a" || d.Type == "" || d.Major == nil || d.Minor == nil) {
				l.add(VDevice, fmt.Sprintf("$.linux.resources.devices[%d]", i), "allows a whole class of devices (%q %s)", d.Type, d.Access)
			}
		}
	}
	lim := l.g.Limits
	if !lim.Cgroups {
		return
	}
	if r == nil {
		r = &specs.LinuxResources{}
	}
	if r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit <= 0 || *r.Memory.Limit > lim.MemoryBytes {
		l.add(VCgroupLimit, "$.linux.resources.memory.limit", "must be set and at most %d bytes", lim.MemoryBytes)
	}
	if r.Pids == nil || r.Pids.Limit == nil || *r.Pids.Limit <= 0 || *r.Pids.Limit > lim.Pids {
		l.add(VCgroupLimit, "$.linux.resources.pids.limit", "must be set and at most %d", lim.Pids)
	}
	ok := r.CPU != nil && r.CPU.Quota != nil && r.CPU.Period != nil && *r.CPU.Quota > 0 && *r.CPU.Period > 0 &&
		*r.CPU.Quota*int64(lim.CPUPeriod) <= lim.CPUQuota*int64(*r.CPU.Period)
	if !ok {
		l.add(VCgroupLimit, "$.linux.resources.cpu", "quota/period must be set and at most %d/%d", lim.CPUQuota, lim.CPUPeriod)
	}
	if r.Memory != nil && r.Memory.DisableOOMKiller != nil && *r.Memory.DisableOOMKiller {
		l.add(VCgroupLimit, "$.linux.resources.memory.disableOOMKiller", "a sandbox at its memory limit must be killed, not left hanging")
	}
	if c := r.CPU; c != nil && (c.RealtimeRuntime != nil && *c.RealtimeRuntime != 0 || c.RealtimePeriod != nil && *c.RealtimePeriod != 0) {
		l.add(VCgroupLimit, "$.linux.resources.cpu.realtimeRuntime", "realtime CPU time lets a sandbox starve the host")
	}
	if len(r.Unified) > 0 {
		l.add(VCgroupLimit, "$.linux.resources.unified", "cgroup v2 keys cannot be checked against tier %s", l.g.Tier)
	}
}

func (l *linter) misc() {
	if l.s.Linux != nil {
		for i, d := range l.s.Linux.Devices {
			l.add(VDevice, fmt.Sprintf("$.linux.devices[%d]", i), "device %s is not granted by tier %s", d.Path, l.g.Tier)
		}
		if len(l.s.Linux.NetDevices) > 0 && !l.g.Isolate.HostNetwork {
			l.add(VNetDevice, "$.linux.netDevices", "a host network interface in the sandbox is not granted by tier %s (network_access=%s)", l.g.Tier, l.g.Access.NetworkAccess)
		}
		keys := make([]string, 0, len(l.s.Linux.Sysctl))
		for k := range l.s.Linux.Sysctl {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !namespacedSysctl(k, l.s) {
				l.add(VSysctl, "$.linux.sysctl."+k, "%s is not namespaced to the sandbox", k)
			}
		}
	}
	if h := l.s.Hooks; h != nil {
		//nolint:staticcheck // Prestart is deprecated but still run by runtimes, so it must be checked.
		stages := []struct {
			name  string
			hooks []specs.Hook
		}{{"prestart", h.Prestart}, {"createRuntime", h.CreateRuntime}, {"createContainer", h.CreateContainer},
			{"startContainer", h.StartContainer}, {"poststart", h.Poststart}, {"poststop", h.Poststop}}
		for _, st := range stages {
			for i, hk := range st.hooks {
				l.add(VHook, fmt.Sprintf("$.hooks.%s[%d]", st.name, i), "hook %s runs on the host outside the sandbox", hk.Path)
			}
		}
	}
}
