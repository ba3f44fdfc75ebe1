//go:build linux && cgo

package container

import (
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/intelrdt"
	"github.com/opencontainers/runc/types"

	"github.com/sbxrun/sbxrun/errcode"
)

// Event is runc's event, the schema `runc events` prints and containerd
// and podman parse: {"type":"stats","id":ID,"data":Stats} or
// {"type":"oom","id":ID}.
type Event = types.Event

// Stats is runc's stats schema (the data of a "stats" event).
type Stats = types.Stats

// Stats reads a container's cgroup and network usage.
func (r *Runtime) Stats(id string) (*Stats, error) {
	c, err := r.load(id)
	if err != nil {
		return nil, err
	}
	return containerStats(c)
}

func containerStats(c *libcontainer.Container) (*Stats, error) {
	ls, err := c.Stats()
	if err != nil {
		return nil, errcode.Errorf(errcode.Internal, "reading stats of %s: %w", c.ID(), err)
	}
	s := convertStats(ls)
	if s == nil {
		return nil, errcode.Errorf(errcode.Unenforceable, "container %s has no cgroup to read stats from", c.ID())
	}
	return s, nil
}

// Events reports a running container's events to emit, as `runc events`
// does: with StatsOnly one stats event; otherwise a stats event every
// Interval and an "oom" event each time the kernel's OOM killer acts in
// the container, until the container's memory cgroup goes away (delete)
// or emit fails.
func (r *Runtime) Events(id string, o EventOptions, emit func(*Event) error) error {
	c, _, err := r.loadLive(id, "read events of")
	if err != nil {
		return err
	}
	if o.StatsOnly {
		s, err := containerStats(c)
		if err != nil {
			return err
		}
		return emit(&Event{Type: "stats", ID: id, Data: s})
	}
	if o.Interval <= 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "the events interval must be positive")
	}
	oom, err := c.NotifyOOM()
	if err != nil {
		return errcode.Errorf(errcode.Unenforceable, "cannot watch %s for OOM events: %w", id, err)
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-oom:
			if !ok {
				// The memory cgroup was removed: the container is gone.
				return nil
			}
			if err := emit(&Event{Type: "oom", ID: id}); err != nil {
				return err
			}
		case <-tick.C:
			s, err := containerStats(c)
			if err != nil {
				return err
			}
			if err := emit(&Event{Type: "stats", ID: id, Data: s}); err != nil {
				return err
			}
		}
	}
}

// convertStats turns libcontainer's stats into runc's schema, field for
// field as runc's `events` does; nil when the container has no cgroup.
func convertStats(ls *libcontainer.Stats) *Stats {
	if ls == nil || ls.CgroupStats == nil {
		return nil
	}
	cg := ls.CgroupStats
	var s Stats
	s.Pids.Current = cg.PidsStats.Current
	s.Pids.Limit = cg.PidsStats.Limit

	u := cg.CpuStats.CpuUsage
	s.CPU.Usage = types.CpuUsage{Total: u.TotalUsage, Percpu: u.PercpuUsage, PercpuKernel: u.PercpuUsageInKernelmode,
		PercpuUser: u.PercpuUsageInUsermode, Kernel: u.UsageInKernelmode, User: u.UsageInUsermode}
	t := cg.CpuStats.ThrottlingData
	s.CPU.Throttling = types.Throttling{Periods: t.Periods, ThrottledPeriods: t.ThrottledPeriods, ThrottledTime: t.ThrottledTime}
	s.CPU.PSI = cg.CpuStats.PSI
	s.CPUSet = types.CPUSet(cg.CPUSetStats)

	m := cg.MemoryStats
	s.Memory.Cache = m.Cache
	s.Memory.Usage = memoryEntry(m.Usage)
	s.Memory.Swap = memoryEntry(m.SwapUsage)
	s.Memory.Kernel = memoryEntry(m.KernelUsage)
	s.Memory.KernelTCP = memoryEntry(m.KernelTCPUsage)
	s.Memory.Raw = m.Stats
	s.Memory.PSI = m.PSI

	b := cg.BlkioStats
	s.Blkio = types.Blkio{
		IoServiceBytesRecursive: blkioEntries(b.IoServiceBytesRecursive),
		IoServicedRecursive:     blkioEntries(b.IoServicedRecursive),
		IoQueuedRecursive:       blkioEntries(b.IoQueuedRecursive),
		IoServiceTimeRecursive:  blkioEntries(b.IoServiceTimeRecursive),
		IoWaitTimeRecursive:     blkioEntries(b.IoWaitTimeRecursive),
		IoMergedRecursive:       blkioEntries(b.IoMergedRecursive),
		IoTimeRecursive:         blkioEntries(b.IoTimeRecursive),
		SectorsRecursive:        blkioEntries(b.SectorsRecursive),
		PSI:                     b.PSI,
	}

	s.Hugetlb = make(map[string]types.Hugetlb, len(cg.HugetlbStats))
	for size, h := range cg.HugetlbStats {
		s.Hugetlb[size] = types.Hugetlb{Usage: h.Usage, Max: h.MaxUsage, Failcnt: h.Failcnt}
	}

	if rdt := ls.IntelRdtStats; rdt != nil {
		if intelrdt.IsCATEnabled() && rdt.L3CacheInfo != nil {
			info := types.L3CacheInfo(*rdt.L3CacheInfo)
			s.IntelRdt.L3CacheInfo = &info
			s.IntelRdt.L3CacheSchemaRoot = rdt.L3CacheSchemaRoot
			s.IntelRdt.L3CacheSchema = rdt.L3CacheSchema
		}
		if intelrdt.IsMBAEnabled() && rdt.MemBwInfo != nil {
			info := types.MemBwInfo(*rdt.MemBwInfo)
			s.IntelRdt.MemBwInfo = &info
			s.IntelRdt.MemBwSchemaRoot = rdt.MemBwSchemaRoot
			s.IntelRdt.MemBwSchema = rdt.MemBwSchema
		}
		if intelrdt.IsMBMEnabled() {
			s.IntelRdt.MBMStats = rdt.MBMStats
		}
		if intelrdt.IsCMTEnabled() {
			s.IntelRdt.CMTStats = rdt.CMTStats
		}
		s.IntelRdt.Schemata = rdt.Schemata
	}

	s.NetworkInterfaces = ls.Interfaces
	return &s
}

func memoryEntry(d cgroups.MemoryData) types.MemoryEntry {
	return types.MemoryEntry{Limit: d.Limit, Usage: d.Usage, Max: d.MaxUsage, Failcnt: d.Failcnt}
}

func blkioEntries(in []cgroups.BlkioStatEntry) []types.BlkioEntry {
	out := make([]types.BlkioEntry, 0, len(in))
	for _, e := range in {
		out = append(out, types.BlkioEntry(e))
	}
	return out
}
