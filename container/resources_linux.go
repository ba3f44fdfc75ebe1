//go:build linux && cgo

package container

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opencontainers/cgroups"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
)

// knob names the cgroup files a resource field is written to: v1 under
// the named controller's directory, v2 under the unified one. Any one of
// the listed files is enough (e.g. blkio.weight or, with BFQ,
// blkio.bfq.weight). A nil list means the field has no file on that
// cgroup version, so libcontainer would skip it.
type knob struct {
	ctrl   string
	v1, v2 []string
}

// knobAvailable reports whether a knob exists in the container's cgroup.
type knobAvailable func(knob) bool

// cgroupKnobs answers knobAvailable from a container's cgroup paths
// (libcontainer's state: v1 controller name → directory; v2 "" → the
// unified directory).
func cgroupKnobs(paths map[string]string, v2 bool) knobAvailable {
	return func(k knob) bool {
		dir, files := paths[k.ctrl], k.v1
		if v2 {
			dir, files = paths[""], k.v2
		}
		if dir == "" {
			return false
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				return true
			}
		}
		return false
	}
}

// updater collects refusals while it applies an update to a copy of the
// container's resources.
type updater struct {
	avail   knobAvailable
	v2      bool
	refused []refusal
}

type refusal struct {
	code errcode.Code
	msg  string
}

func (u *updater) refuse(code errcode.Code, field, format string, args ...any) {
	u.refused = append(u.refused, refusal{code, field + ": " + fmt.Sprintf(format, args...)})
}

// need refuses field unless its cgroup file exists: libcontainer writes
// into a missing controller either not at all or with an error that does
// not say which field caused it.
func (u *updater) need(field string, k knob) bool {
	if u.avail(k) {
		return true
	}
	files := k.v1
	if u.v2 {
		files = k.v2
	}
	if len(files) == 0 {
		v := "v1"
		if u.v2 {
			v = "v2"
		}
		u.refuse(errcode.Unenforceable, field, "cgroup %s has no such setting", v)
	} else {
		u.refuse(errcode.Unenforceable, field, "this container's cgroup has no %s (controller %s not available)", strings.Join(files, " or "), k.ctrl)
	}
	return false
}

// nonZero refuses a zero value where libcontainer reads zero as "leave
// unchanged": writing it would silently do nothing.
func (u *updater) nonZero(field string, zero bool, hint string) bool {
	if zero {
		u.refuse(errcode.ConfigInvalid, field, "0 would leave the current value unchanged%s", hint)
		return false
	}
	return true
}

// applyResources merges an OCI resources update into a container's
// libcontainer cgroup resources, for cgroup v2 (v2) or v1. Every field of specs.LinuxResources is
// either applied or refused, naming the field by its JSON path; nothing is
// applied when anything is refused. resources_linux_test.go walks
// specs.LinuxResources so that a field added to the spec fails the test
// until it is handled here.
func applyResources(cur *cgroups.Resources, res *specs.LinuxResources, v2 bool, avail knobAvailable) error {
	u := &updater{avail: avail, v2: v2}
	next := cloneResources(cur)
	if res != nil {
		if len(res.Devices) > 0 {
			u.refuse(errcode.ConfigInvalid, "devices", "the device allowlist of a running container cannot be updated")
		}
		u.memory(next, res.Memory)
		u.cpu(next, res.CPU)
		if res.Pids != nil && res.Pids.Limit != nil && u.need("pids.limit", knob{"pids", []string{"pids.max"}, []string{"pids.max"}}) {
			// libcontainer writes "max" for 0 and below, as the spec's
			// "no limit".
			v := *res.Pids.Limit
			next.PidsLimit = &v
		}
		u.blockIO(next, res.BlockIO)
		u.hugepages(next, res.HugepageLimits)
		u.network(next, res.Network)
		u.rdma(next, res.Rdma)
		u.unified(next, res.Unified)
	}
	if len(u.refused) > 0 {
		msgs := make([]string, len(u.refused))
		for i, r := range u.refused {
			msgs[i] = r.msg
		}
		return &errcode.Error{Code: u.refused[0].code, Msg: "update refused: " + strings.Join(msgs, "; ")}
	}
	*cur = *next
	return nil
}

func (u *updater) memory(r *cgroups.Resources, m *specs.LinuxMemory) {
	if m == nil {
		return
	}
	memKnob := func(v1, v2 string) knob {
		k := knob{ctrl: "memory"}
		if v1 != "" {
			k.v1 = []string{v1}
		}
		if v2 != "" {
			k.v2 = []string{v2}
		}
		return k
	}
	if m.Limit != nil && u.nonZero("memory.limit", *m.Limit == 0, "; -1 removes the limit") &&
		u.need("memory.limit", memKnob("memory.limit_in_bytes", "memory.max")) {
		r.Memory = *m.Limit
	}
	if m.Reservation != nil && u.nonZero("memory.reservation", *m.Reservation == 0, "; -1 removes the reservation") &&
		u.need("memory.reservation", memKnob("memory.soft_limit_in_bytes", "memory.low")) {
		r.MemoryReservation = *m.Reservation
	}
	if m.Swap != nil && u.nonZero("memory.swap", *m.Swap == 0, "; -1 removes the limit") &&
		u.need("memory.swap", memKnob("memory.memsw.limit_in_bytes", "memory.swap.max")) {
		r.MemorySwap = *m.Swap
	}
	if m.Kernel != nil { //nolint:staticcheck // refused, never read for its value
		u.refuse(errcode.ConfigInvalid, "memory.kernel", "kernel memory limits are obsolete and not supported")
	}
	if m.KernelTCP != nil {
		u.refuse(errcode.ConfigInvalid, "memory.kernelTCP", "kernel TCP memory limits are not supported")
	}
	if m.Swappiness != nil {
		if *m.Swappiness > 100 {
			u.refuse(errcode.ConfigInvalid, "memory.swappiness", "%d is out of range 0-100", *m.Swappiness)
		} else if u.need("memory.swappiness", memKnob("memory.swappiness", "")) {
			v := *m.Swappiness
			r.MemorySwappiness = &v
		}
	}
	if m.DisableOOMKiller != nil {
		switch {
		case *m.DisableOOMKiller && u.need("memory.disableOOMKiller", memKnob("memory.oom_control", "")):
			r.OomKillDisable = true
		case !*m.DisableOOMKiller && r.OomKillDisable:
			u.refuse(errcode.ConfigInvalid, "memory.disableOOMKiller", "the OOM killer of a running container cannot be re-enabled")
		}
	}
	if m.UseHierarchy != nil {
		u.refuse(errcode.ConfigInvalid, "memory.useHierarchy", "hierarchical accounting cannot be changed (it is always on)")
	}
	if m.CheckBeforeUpdate != nil {
		// cgroup v2: libcontainer refuses a memory limit below the current
		// usage. cgroup v1 has this built in: the kernel refuses (EBUSY) a
		// limit it cannot reclaim down to.
		r.MemoryCheckBeforeUpdate = *m.CheckBeforeUpdate
	}
}

func (u *updater) cpu(r *cgroups.Resources, c *specs.LinuxCPU) {
	if c == nil {
		return
	}
	cpuKnob := func(v1, v2 string) knob {
		k := knob{ctrl: "cpu"}
		if v1 != "" {
			k.v1 = []string{v1}
		}
		if v2 != "" {
			k.v2 = []string{v2}
		}
		return k
	}
	if c.Shares != nil && u.nonZero("cpu.shares", *c.Shares == 0, "") && u.need("cpu.shares", cpuKnob("cpu.shares", "cpu.weight")) {
		r.CpuShares = *c.Shares
		r.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(*c.Shares)
	}
	// Quota and period may be updated alone; the other keeps its value.
	if c.Quota != nil && u.nonZero("cpu.quota", *c.Quota == 0, "; -1 removes the quota") && u.need("cpu.quota", cpuKnob("cpu.cfs_quota_us", "cpu.max")) {
		r.CpuQuota = *c.Quota
	}
	if c.Period != nil && u.nonZero("cpu.period", *c.Period == 0, "") && u.need("cpu.period", cpuKnob("cpu.cfs_period_us", "cpu.max")) {
		r.CpuPeriod = *c.Period
	}
	if c.Burst != nil && u.need("cpu.burst", cpuKnob("cpu.cfs_burst_us", "cpu.max.burst")) {
		v := *c.Burst
		r.CpuBurst = &v
	}
	if c.RealtimeRuntime != nil && u.nonZero("cpu.realtimeRuntime", *c.RealtimeRuntime == 0, "") &&
		u.need("cpu.realtimeRuntime", cpuKnob("cpu.rt_runtime_us", "")) {
		r.CpuRtRuntime = *c.RealtimeRuntime
	}
	if c.RealtimePeriod != nil && u.nonZero("cpu.realtimePeriod", *c.RealtimePeriod == 0, "") &&
		u.need("cpu.realtimePeriod", cpuKnob("cpu.rt_period_us", "")) {
		r.CpuRtPeriod = *c.RealtimePeriod
	}
	if c.Cpus != "" && u.need("cpu.cpus", knob{"cpuset", []string{"cpuset.cpus"}, []string{"cpuset.cpus"}}) {
		r.CpusetCpus = c.Cpus
	}
	if c.Mems != "" && u.need("cpu.mems", knob{"cpuset", []string{"cpuset.mems"}, []string{"cpuset.mems"}}) {
		r.CpusetMems = c.Mems
	}
	if c.Idle != nil && u.need("cpu.idle", cpuKnob("cpu.idle", "cpu.idle")) {
		v := *c.Idle
		r.CPUIdle = &v
	}
}

func (u *updater) blockIO(r *cgroups.Resources, b *specs.LinuxBlockIO) {
	if b == nil {
		return
	}
	weight := knob{"blkio", []string{"blkio.weight", "blkio.bfq.weight"}, []string{"io.bfq.weight", "io.weight"}}
	weightDevice := knob{"blkio", []string{"blkio.weight_device", "blkio.bfq.weight_device"}, []string{"io.bfq.weight", "io.weight"}}
	leaf := knob{"blkio", []string{"blkio.leaf_weight"}, nil}
	leafDevice := knob{"blkio", []string{"blkio.leaf_weight_device"}, nil}
	if b.Weight != nil && u.nonZero("blockIO.weight", *b.Weight == 0, "") && u.need("blockIO.weight", weight) {
		r.BlkioWeight = *b.Weight
	}
	if b.LeafWeight != nil && u.nonZero("blockIO.leafWeight", *b.LeafWeight == 0, "") && u.need("blockIO.leafWeight", leaf) {
		r.BlkioLeafWeight = *b.LeafWeight
	}
	for i, wd := range b.WeightDevice {
		field := fmt.Sprintf("blockIO.weightDevice[%d]", i)
		ok := true
		switch {
		case wd.Weight == nil && wd.LeafWeight == nil:
			u.refuse(errcode.ConfigInvalid, field, "sets neither weight nor leafWeight")
			ok = false
		case wd.Weight != nil && *wd.Weight == 0, wd.LeafWeight != nil && *wd.LeafWeight == 0:
			ok = u.nonZero(field, true, "")
		}
		if wd.Weight != nil {
			ok = u.need(field+".weight", weightDevice) && ok
		}
		if wd.LeafWeight != nil {
			ok = u.need(field+".leafWeight", leafDevice) && ok
		}
		if ok {
			r.BlkioWeightDevice = upsertWeightDevice(r.BlkioWeightDevice, wd)
		}
	}
	throttles := []struct {
		field string
		in    []specs.LinuxThrottleDevice
		out   *[]*cgroups.ThrottleDevice
		v1    string
	}{
		{"blockIO.throttleReadBpsDevice", b.ThrottleReadBpsDevice, &r.BlkioThrottleReadBpsDevice, "blkio.throttle.read_bps_device"},
		{"blockIO.throttleWriteBpsDevice", b.ThrottleWriteBpsDevice, &r.BlkioThrottleWriteBpsDevice, "blkio.throttle.write_bps_device"},
		{"blockIO.throttleReadIOPSDevice", b.ThrottleReadIOPSDevice, &r.BlkioThrottleReadIOPSDevice, "blkio.throttle.read_iops_device"},
		{"blockIO.throttleWriteIOPSDevice", b.ThrottleWriteIOPSDevice, &r.BlkioThrottleWriteIOPSDevice, "blkio.throttle.write_iops_device"},
	}
	for _, t := range throttles {
		if len(t.in) == 0 || !u.need(t.field, knob{"blkio", []string{t.v1}, []string{"io.max"}}) {
			continue
		}
		for _, td := range t.in {
			*t.out = upsertThrottleDevice(*t.out, td)
		}
	}
}

func (u *updater) hugepages(r *cgroups.Resources, limits []specs.LinuxHugepageLimit) {
	for i, l := range limits {
		field := fmt.Sprintf("hugepageLimits[%d]", i)
		if l.Pagesize == "" {
			u.refuse(errcode.ConfigInvalid, field+".pageSize", "is empty")
			continue
		}
		if !u.need(field, knob{"hugetlb", []string{"hugetlb." + l.Pagesize + ".limit_in_bytes"}, []string{"hugetlb." + l.Pagesize + ".max"}}) {
			continue
		}
		i := slices.IndexFunc(r.HugetlbLimit, func(h *cgroups.HugepageLimit) bool { return h.Pagesize == l.Pagesize })
		if i < 0 {
			r.HugetlbLimit = append(r.HugetlbLimit, &cgroups.HugepageLimit{Pagesize: l.Pagesize, Limit: l.Limit})
		} else {
			r.HugetlbLimit[i] = &cgroups.HugepageLimit{Pagesize: l.Pagesize, Limit: l.Limit}
		}
	}
}

func (u *updater) network(r *cgroups.Resources, n *specs.LinuxNetwork) {
	if n == nil {
		return
	}
	if n.ClassID != nil && u.nonZero("network.classID", *n.ClassID == 0, "") &&
		u.need("network.classID", knob{"net_cls", []string{"net_cls.classid"}, nil}) {
		r.NetClsClassid = *n.ClassID
	}
	if len(n.Priorities) == 0 || !u.need("network.priorities", knob{"net_prio", []string{"net_prio.ifpriomap"}, nil}) {
		return
	}
	for i, p := range n.Priorities {
		if p.Name == "" {
			u.refuse(errcode.ConfigInvalid, fmt.Sprintf("network.priorities[%d].name", i), "is empty")
			continue
		}
		e := &cgroups.IfPrioMap{Interface: p.Name, Priority: int64(p.Priority)}
		if j := slices.IndexFunc(r.NetPrioIfpriomap, func(m *cgroups.IfPrioMap) bool { return m.Interface == p.Name }); j >= 0 {
			r.NetPrioIfpriomap[j] = e
		} else {
			r.NetPrioIfpriomap = append(r.NetPrioIfpriomap, e)
		}
	}
}

func (u *updater) rdma(r *cgroups.Resources, in map[string]specs.LinuxRdma) {
	if len(in) == 0 || !u.need("rdma", knob{"rdma", []string{"rdma.max"}, []string{"rdma.max"}}) {
		return
	}
	devs := make([]string, 0, len(in))
	for d := range in {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	for _, d := range devs {
		l := in[d]
		if l.HcaHandles == nil && l.HcaObjects == nil {
			u.refuse(errcode.ConfigInvalid, "rdma."+d, "sets neither hcaHandles nor hcaObjects")
			continue
		}
		if r.Rdma == nil {
			r.Rdma = map[string]cgroups.LinuxRdma{}
		}
		cur := r.Rdma[d]
		if l.HcaHandles != nil {
			v := *l.HcaHandles
			cur.HcaHandles = &v
		}
		if l.HcaObjects != nil {
			v := *l.HcaObjects
			cur.HcaObjects = &v
		}
		r.Rdma[d] = cur
	}
}

func (u *updater) unified(r *cgroups.Resources, in map[string]string) {
	if len(in) == 0 {
		return
	}
	if !u.v2 {
		u.refuse(errcode.ConfigInvalid, "unified", "needs the cgroup v2 unified hierarchy; this host's container cgroups are v1")
		return
	}
	if r.Unified == nil {
		r.Unified = map[string]string{}
	}
	for k, v := range in {
		r.Unified[k] = v
	}
}

// upsertWeightDevice updates the entry for wd's device or appends one.
func upsertWeightDevice(list []*cgroups.WeightDevice, wd specs.LinuxWeightDevice) []*cgroups.WeightDevice {
	for i := len(list) - 1; i >= 0; i-- {
		d := list[i]
		if d.Major != wd.Major || d.Minor != wd.Minor {
			continue
		}
		n := *d
		if wd.Weight != nil {
			n.Weight = *wd.Weight
		}
		if wd.LeafWeight != nil {
			n.LeafWeight = *wd.LeafWeight
		}
		list[i] = &n
		return list
	}
	var w, lw uint16
	if wd.Weight != nil {
		w = *wd.Weight
	}
	if wd.LeafWeight != nil {
		lw = *wd.LeafWeight
	}
	return append(list, cgroups.NewWeightDevice(wd.Major, wd.Minor, w, lw))
}

// upsertThrottleDevice updates the entry for td's device or appends one.
// A rate of 0 is written too: it removes the device's throttle.
func upsertThrottleDevice(list []*cgroups.ThrottleDevice, td specs.LinuxThrottleDevice) []*cgroups.ThrottleDevice {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Major == td.Major && list[i].Minor == td.Minor {
			list[i] = cgroups.NewThrottleDevice(td.Major, td.Minor, td.Rate)
			return list
		}
	}
	return append(list, cgroups.NewThrottleDevice(td.Major, td.Minor, td.Rate))
}

// cloneResources copies r deeply enough that applyResources never changes
// the original: slices and maps it appends to or replaces entries of are
// copied.
func cloneResources(r *cgroups.Resources) *cgroups.Resources {
	n := *r
	n.BlkioWeightDevice = slices.Clone(r.BlkioWeightDevice)
	n.BlkioThrottleReadBpsDevice = slices.Clone(r.BlkioThrottleReadBpsDevice)
	n.BlkioThrottleWriteBpsDevice = slices.Clone(r.BlkioThrottleWriteBpsDevice)
	n.BlkioThrottleReadIOPSDevice = slices.Clone(r.BlkioThrottleReadIOPSDevice)
	n.BlkioThrottleWriteIOPSDevice = slices.Clone(r.BlkioThrottleWriteIOPSDevice)
	n.HugetlbLimit = slices.Clone(r.HugetlbLimit)
	n.NetPrioIfpriomap = slices.Clone(r.NetPrioIfpriomap)
	if r.Rdma != nil {
		n.Rdma = make(map[string]cgroups.LinuxRdma, len(r.Rdma))
		for k, v := range r.Rdma {
			n.Rdma[k] = v
		}
	}
	if r.Unified != nil {
		n.Unified = make(map[string]string, len(r.Unified))
		for k, v := range r.Unified {
			n.Unified[k] = v
		}
	}
	return &n
}
