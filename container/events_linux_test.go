//go:build linux && cgo

package container

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/types"
)

// fillAll sets every leaf reachable from v (structs, pointers, slices and
// maps included) to a distinct non-zero value.
func fillAll(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), n)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillAll(v.Index(0), n)
		fillAll(v.Index(1), n)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fillAll(k, n)
		e := reflect.New(v.Type().Elem()).Elem()
		fillAll(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("s" + strconv.Itoa(*n))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n))
	case reflect.Bool:
		v.SetBool(true)
	}
}

// zeroLeaves lists the leaves of v that are zero.
func zeroLeaves(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return zeroLeaves(v.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out = append(out, zeroLeaves(v.Field(i), path+"."+v.Type().Field(i).Name)...)
			}
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for i := 0; i < v.Len(); i++ {
			out = append(out, zeroLeaves(v.Index(i), path+"[]")...)
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, zeroLeaves(v.MapIndex(k), path+"["+k.String()+"]")...)
		}
		return out
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

// TestStatsConversionFillsRuncSchema: from libcontainer stats whose every
// field is set, every field of runc's types.Stats is set (Intel RDT only
// where the host has it, as runc does), and the values land where runc
// puts them.
func TestStatsConversionFillsRuncSchema(t *testing.T) {
	var ls libcontainer.Stats
	n := 0
	fillAll(reflect.ValueOf(&ls).Elem(), &n)
	s := convertStats(&ls)
	if s == nil {
		t.Fatal("no stats")
	}
	var zero []string
	for _, z := range zeroLeaves(reflect.ValueOf(s).Elem(), "Stats") {
		if !strings.HasPrefix(z, "Stats.IntelRdt") {
			zero = append(zero, z)
		}
	}
	if len(zero) > 0 {
		t.Errorf("fields of types.Stats left empty: %v", zero)
	}
	cg := ls.CgroupStats
	checks := []struct {
		name      string
		got, want any
	}{
		{"pids.current", s.Pids.Current, cg.PidsStats.Current},
		{"pids.limit", s.Pids.Limit, cg.PidsStats.Limit},
		{"cpu.usage.total", s.CPU.Usage.Total, cg.CpuStats.CpuUsage.TotalUsage},
		{"cpu.usage.kernel", s.CPU.Usage.Kernel, cg.CpuStats.CpuUsage.UsageInKernelmode},
		{"cpu.usage.user", s.CPU.Usage.User, cg.CpuStats.CpuUsage.UsageInUsermode},
		{"cpu.usage.percpu", s.CPU.Usage.Percpu, cg.CpuStats.CpuUsage.PercpuUsage},
		{"cpu.usage.percpu_kernel", s.CPU.Usage.PercpuKernel, cg.CpuStats.CpuUsage.PercpuUsageInKernelmode},
		{"cpu.usage.percpu_user", s.CPU.Usage.PercpuUser, cg.CpuStats.CpuUsage.PercpuUsageInUsermode},
		{"cpu.throttling.periods", s.CPU.Throttling.Periods, cg.CpuStats.ThrottlingData.Periods},
		{"cpu.throttling.throttledPeriods", s.CPU.Throttling.ThrottledPeriods, cg.CpuStats.ThrottlingData.ThrottledPeriods},
		{"cpu.throttling.throttledTime", s.CPU.Throttling.ThrottledTime, cg.CpuStats.ThrottlingData.ThrottledTime},
		{"cpu.psi", s.CPU.PSI, cg.CpuStats.PSI},
		{"cpuset", s.CPUSet, types.CPUSet(cg.CPUSetStats)},
		{"memory.cache", s.Memory.Cache, cg.MemoryStats.Cache},
		{"memory.usage", s.Memory.Usage, types.MemoryEntry{Limit: cg.MemoryStats.Usage.Limit, Usage: cg.MemoryStats.Usage.Usage, Max: cg.MemoryStats.Usage.MaxUsage, Failcnt: cg.MemoryStats.Usage.Failcnt}},
		{"memory.swap", s.Memory.Swap, types.MemoryEntry{Limit: cg.MemoryStats.SwapUsage.Limit, Usage: cg.MemoryStats.SwapUsage.Usage, Max: cg.MemoryStats.SwapUsage.MaxUsage, Failcnt: cg.MemoryStats.SwapUsage.Failcnt}},
		{"memory.kernel", s.Memory.Kernel, types.MemoryEntry{Limit: cg.MemoryStats.KernelUsage.Limit, Usage: cg.MemoryStats.KernelUsage.Usage, Max: cg.MemoryStats.KernelUsage.MaxUsage, Failcnt: cg.MemoryStats.KernelUsage.Failcnt}},
		{"memory.kernelTCP", s.Memory.KernelTCP, types.MemoryEntry{Limit: cg.MemoryStats.KernelTCPUsage.Limit, Usage: cg.MemoryStats.KernelTCPUsage.Usage, Max: cg.MemoryStats.KernelTCPUsage.MaxUsage, Failcnt: cg.MemoryStats.KernelTCPUsage.Failcnt}},
		{"memory.raw", s.Memory.Raw, cg.MemoryStats.Stats},
		{"memory.psi", s.Memory.PSI, cg.MemoryStats.PSI},
		{"blkio.ioServiceBytesRecursive", s.Blkio.IoServiceBytesRecursive, entries(cg.BlkioStats.IoServiceBytesRecursive)},
		{"blkio.ioServicedRecursive", s.Blkio.IoServicedRecursive, entries(cg.BlkioStats.IoServicedRecursive)},
		{"blkio.ioQueueRecursive", s.Blkio.IoQueuedRecursive, entries(cg.BlkioStats.IoQueuedRecursive)},
		{"blkio.ioServiceTimeRecursive", s.Blkio.IoServiceTimeRecursive, entries(cg.BlkioStats.IoServiceTimeRecursive)},
		{"blkio.ioWaitTimeRecursive", s.Blkio.IoWaitTimeRecursive, entries(cg.BlkioStats.IoWaitTimeRecursive)},
		{"blkio.ioMergedRecursive", s.Blkio.IoMergedRecursive, entries(cg.BlkioStats.IoMergedRecursive)},
		{"blkio.ioTimeRecursive", s.Blkio.IoTimeRecursive, entries(cg.BlkioStats.IoTimeRecursive)},
		{"blkio.sectorsRecursive", s.Blkio.SectorsRecursive, entries(cg.BlkioStats.SectorsRecursive)},
		{"blkio.psi", s.Blkio.PSI, cg.BlkioStats.PSI},
		{"network_interfaces", s.NetworkInterfaces, ls.Interfaces},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	for size, h := range cg.HugetlbStats {
		if got := s.Hugetlb[size]; got != (types.Hugetlb{Usage: h.Usage, Max: h.MaxUsage, Failcnt: h.Failcnt}) {
			t.Errorf("hugetlb[%s] = %+v from %+v", size, got, h)
		}
	}
	// runc's JSON field names, which containerd and the tests parse.
	data, err := json.Marshal(&Event{Type: "stats", ID: "c", Data: s})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Type string
		ID   string
		Data struct {
			Memory struct{ Usage struct{ Limit uint64 } }
			Pids   struct{ Current, Limit uint64 }
		}
	}
	if err := json.Unmarshal(data, &back); err != nil || back.Type != "stats" || back.ID != "c" ||
		back.Data.Memory.Usage.Limit != cg.MemoryStats.Usage.Limit || back.Data.Pids.Current != cg.PidsStats.Current || back.Data.Pids.Limit != cg.PidsStats.Limit {
		t.Errorf("event JSON %s: %v %+v", data, err, back)
	}
}

func entries(in []cgroups.BlkioStatEntry) []types.BlkioEntry {
	out := []types.BlkioEntry{}
	for _, e := range in {
		out = append(out, types.BlkioEntry{Major: e.Major, Minor: e.Minor, Op: e.Op, Value: e.Value})
	}
	return out
}

func TestStatsConversionWithoutCgroup(t *testing.T) {
	if s := convertStats(&libcontainer.Stats{}); s != nil {
		t.Errorf("stats without a cgroup: %+v", s)
	}
	if s := convertStats(nil); s != nil {
		t.Errorf("nil stats: %+v", s)
	}
}
