package enforce

import (
	"fmt"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
)

// CheckUpdate checks a resource update of a running sandbox against its
// tier, field by field: a ceiling the tier sets (memory, memory+swap, CPU
// quota, pids) may only be lowered, a field that could loosen the sandbox
// and cannot be compared (devices, realtime CPU time, a disabled OOM
// killer, cgroup v2 unified keys) is refused, and fields that only restrict
// (shares, cpusets, block I/O, hugepages, network class, rdma) pass. Every
// violation is listed; the error is SANDBOX_POLICY_CONFLICT, or
// SANDBOX_CONFIG_INVALID for values no cgroup accepts.
//
// cur are the container's current ceilings (nil if unknown): a field the
// update leaves out keeps its current value, so memory+swap is checked
// against the memory limit the container will have, and a CPU quota or
// period given alone against the other's current value.
//
// Where the tier allows no swap (memory+swap equal to memory), a memory
// update without a swap value gets one equal to the new limit, so lowering
// memory never opens room to swap; the returned changes say so.
func CheckUpdate(res, cur *specs.LinuxResources, g *policy.Grants) (changes []string, err error) {
	if res == nil {
		return nil, nil
	}
	if !g.Limits.Cgroups {
		return nil, errcode.Errorf(errcode.Unenforceable, "tier %s has no cgroup limits for this caller (no cgroup delegation): nothing can be updated", g.Tier)
	}
	var conflicts, invalid []string
	over := func(format string, args ...any) { conflicts = append(conflicts, fmt.Sprintf(format, args...)) }
	bad := func(format string, args ...any) { invalid = append(invalid, fmt.Sprintf(format, args...)) }
	l := g.Limits
	if len(res.Devices) > 0 {
		over("devices: the device allowlist of a sandbox cannot be changed")
	}
	if m := res.Memory; m != nil {
		if m.Limit != nil {
			switch v := *m.Limit; {
			case v <= 0:
				over("memory.limit %d: unlimited memory is above tier %s's %d", v, g.Tier, l.MemoryBytes)
			case v < policy.MinMemoryBytes:
				bad("memory.limit %d: below the minimum of %d bytes a container needs", v, policy.MinMemoryBytes)
			case v > l.MemoryBytes:
				over("memory.limit %d is above tier %s's %d", v, g.Tier, l.MemoryBytes)
			}
		}
		if m.Swap != nil {
			limit := l.MemoryBytes
			if cur != nil && cur.Memory != nil && cur.Memory.Limit != nil && *cur.Memory.Limit > 0 {
				limit = *cur.Memory.Limit
			}
			if m.Limit != nil && *m.Limit > 0 {
				limit = *m.Limit
			}
			switch v := *m.Swap; {
			case l.SwapBytes > 0 && v != limit && (v <= 0 || v > limit):
				over("memory.swap %d: tier %s allows no swap (memory+swap must equal the memory limit %d)", v, g.Tier, limit)
			case v > 0 && v < limit:
				bad("memory.swap %d: memory+swap cannot be below the memory limit %d", v, limit)
			}
		} else if m.Limit != nil && *m.Limit > 0 && l.SwapBytes > 0 {
			v := *m.Limit
			m.Swap = &v
			changes = append(changes, fmt.Sprintf("memory.swap set to %d with the memory limit: tier %s allows no swap", v, g.Tier))
		}
		if m.Reservation != nil && *m.Reservation > l.MemoryBytes {
			over("memory.reservation %d is above tier %s's memory %d", *m.Reservation, g.Tier, l.MemoryBytes)
		}
		if m.Kernel != nil && (*m.Kernel <= 0 || *m.Kernel > l.MemoryBytes) {
			over("memory.kernel %d is not below tier %s's memory %d", *m.Kernel, g.Tier, l.MemoryBytes)
		}
		if m.KernelTCP != nil && (*m.KernelTCP <= 0 || *m.KernelTCP > l.MemoryBytes) {
			over("memory.kernelTCP %d is not below tier %s's memory %d", *m.KernelTCP, g.Tier, l.MemoryBytes)
		}
		if m.Swappiness != nil && *m.Swappiness > 100 {
			bad("memory.swappiness %d: want 0-100", *m.Swappiness)
		}
		if m.DisableOOMKiller != nil && *m.DisableOOMKiller {
			over("memory.disableOOMKiller: a sandbox at its memory limit is killed, not left hanging")
		}
	}
	if c := res.CPU; c != nil {
		quota, period := c.Quota, c.Period
		if cur != nil && cur.CPU != nil {
			if quota == nil && cur.CPU.Quota != nil && *cur.CPU.Quota != 0 {
				quota = cur.CPU.Quota
			}
			if period == nil && cur.CPU.Period != nil && *cur.CPU.Period != 0 {
				period = cur.CPU.Period
			}
		}
		switch {
		case c.Quota == nil && c.Period == nil:
		case quota == nil || period == nil:
			over("cpu.quota and cpu.period: give both (the container's current value of the other is unknown)")
		case *quota <= 0 || *period == 0:
			over("cpu.quota %d/%d: an unlimited CPU share is above tier %s's %d/%d", *quota, *period, g.Tier, l.CPUQuota, l.CPUPeriod)
		case *quota*int64(l.CPUPeriod) > l.CPUQuota*int64(*period):
			over("cpu quota %d/%d is above tier %s's %d/%d", *quota, *period, g.Tier, l.CPUQuota, l.CPUPeriod)
		}
		if c.Burst != nil && *c.Burst > 0 {
			q := l.CPUQuota
			if quota != nil && *quota > 0 {
				q = *quota
			}
			if int64(*c.Burst) > q {
				over("cpu.burst %d is above the quota %d it may borrow against", *c.Burst, q)
			}
		}
		if (c.RealtimeRuntime != nil && *c.RealtimeRuntime != 0) || (c.RealtimePeriod != nil && *c.RealtimePeriod != 0) {
			over("cpu.realtimeRuntime/realtimePeriod: realtime CPU time lets a sandbox starve the host")
		}
		if c.Shares != nil && (*c.Shares < 2 || *c.Shares > 262144) {
			bad("cpu.shares %d: want 2-262144", *c.Shares)
		}
	}
	if p := res.Pids; p != nil && p.Limit != nil {
		if v := *p.Limit; v <= 0 || v > l.Pids {
			over("pids.limit %d is above tier %s's %d", v, g.Tier, l.Pids)
		}
	}
	if len(res.Unified) > 0 {
		over("unified: cgroup v2 keys cannot be checked against tier %s; use the typed fields", g.Tier)
	}
	switch {
	case len(conflicts) > 0:
		return nil, &errcode.Error{Code: errcode.PolicyConflict, Msg: fmt.Sprintf("update exceeds tier %s", g.Tier), Details: append(conflicts, invalid...)}
	case len(invalid) > 0:
		return nil, &errcode.Error{Code: errcode.ConfigInvalid, Msg: "update is malformed", Details: invalid}
	}
	return changes, nil
}
