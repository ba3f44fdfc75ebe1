package enforce

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// StripCgroupLimits removes cgroup resource limits that cannot be applied
// (a rootless caller without cgroup delegation) and returns what was
// removed. libcontainer would ignore the failure silently; removing the
// limits here lets the caller report each one as not enforced instead. A
// pids limit is kept as RLIMIT_NPROC, which the kernel counts per user
// namespace.
func StripCgroupLimits(s *specs.Spec) []string {
	if s.Linux == nil || s.Linux.Resources == nil {
		return nil
	}
	r := s.Linux.Resources
	var out []string
	if r.Memory != nil && r.Memory.Limit != nil && *r.Memory.Limit > 0 {
		out = append(out, fmt.Sprintf("linux.resources.memory.limit=%d: not enforced, no cgroup delegation for this caller", *r.Memory.Limit))
	}
	if r.CPU != nil && r.CPU.Quota != nil && *r.CPU.Quota > 0 {
		out = append(out, fmt.Sprintf("linux.resources.cpu.quota=%d: not enforced, no cgroup delegation for this caller", *r.CPU.Quota))
	}
	if r.Pids != nil && r.Pids.Limit != nil && *r.Pids.Limit > 0 {
		n := uint64(*r.Pids.Limit)
		out = append(out, fmt.Sprintf("linux.resources.pids.limit=%d: applied as RLIMIT_NPROC instead of a cgroup", n))
		if s.Process != nil {
			replaced := false
			for i, rl := range s.Process.Rlimits {
				if rl.Type == "RLIMIT_NPROC" {
					replaced = true
					if rl.Hard > n {
						s.Process.Rlimits[i] = specs.POSIXRlimit{Type: "RLIMIT_NPROC", Hard: n, Soft: min(rl.Soft, n)}
					}
				}
			}
			if !replaced {
				s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_NPROC", Hard: n, Soft: n})
			}
		}
	}
	if len(out) > 0 {
		s.Linux.Resources = &specs.LinuxResources{Devices: r.Devices}
	}
	return out
}

// NoSharedPropagation rewrites shared mount and rootfs propagation to
// rslave and returns what it changed. Shared propagation would let mounts
// made inside the container appear in the host's mount namespace; rslave
// still receives the host's mounts, which is what engines rely on. This
// applies to every spec, with or without a tier.
func NoSharedPropagation(s *specs.Spec) []string {
	var changed []string
	for i := range s.Mounts {
		for j, o := range s.Mounts[i].Options {
			if o == "shared" || o == "rshared" {
				s.Mounts[i].Options[j] = "rslave"
				changed = append(changed, fmt.Sprintf("mounts[%d] (%s): %s propagation made rslave", i, s.Mounts[i].Destination, o))
			}
		}
	}
	if s.Linux != nil && (s.Linux.RootfsPropagation == "shared" || s.Linux.RootfsPropagation == "rshared") {
		changed = append(changed, fmt.Sprintf("linux.rootfsPropagation: %s made rslave", s.Linux.RootfsPropagation))
		s.Linux.RootfsPropagation = "rslave"
	}
	return changed
}
