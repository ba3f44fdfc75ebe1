//go:build linux && cgo

package container

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
)

func i64(v int64) *int64   { return &v }
func u64(v uint64) *uint64 { return &v }
func u16(v uint16) *uint16 { return &v }
func boolp(v bool) *bool   { return &v }
func allKnobs(knob) bool   { return true }

// resourceCase is how one leaf of specs.LinuxResources is treated: res
// sets it (with whatever siblings it needs) to a distinctive value; then
// either applied finds that value in the cgroup resources, or refused is
// the field name the refusal must contain.
type resourceCase struct {
	res     func() *specs.LinuxResources
	applied func(r *cgroups.Resources) bool
	refused string
}

func weightDevices() *specs.LinuxResources {
	d := specs.LinuxWeightDevice{Weight: u16(500), LeafWeight: u16(600)}
	d.Major, d.Minor = 8, 16
	return &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{WeightDevice: []specs.LinuxWeightDevice{d}}}
}

func throttle(set func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice)) func() *specs.LinuxResources {
	return func() *specs.LinuxResources {
		d := specs.LinuxThrottleDevice{Rate: 4096}
		d.Major, d.Minor = 8, 32
		b := &specs.LinuxBlockIO{}
		set(b, []specs.LinuxThrottleDevice{d})
		return &specs.LinuxResources{BlockIO: b}
	}
}

func throttled(get func(r *cgroups.Resources) []*cgroups.ThrottleDevice, ok func(d *cgroups.ThrottleDevice) bool) func(r *cgroups.Resources) bool {
	return func(r *cgroups.Resources) bool { l := get(r); return len(l) == 1 && ok(l[0]) }
}

func throttleCases(name string, set func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice), get func(r *cgroups.Resources) []*cgroups.ThrottleDevice) map[string]resourceCase {
	return map[string]resourceCase{
		"BlockIO." + name + "[].Major": {res: throttle(set), applied: throttled(get, func(d *cgroups.ThrottleDevice) bool { return d.Major == 8 })},
		"BlockIO." + name + "[].Minor": {res: throttle(set), applied: throttled(get, func(d *cgroups.ThrottleDevice) bool { return d.Minor == 32 })},
		"BlockIO." + name + "[].Rate":  {res: throttle(set), applied: throttled(get, func(d *cgroups.ThrottleDevice) bool { return d.Rate == 4096 })},
	}
}

func resourceCases() map[string]resourceCase {
	device := func() *specs.LinuxResources {
		return &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: true, Type: "c", Major: i64(1), Minor: i64(3), Access: "rwm"}}}
	}
	mem := func(m specs.LinuxMemory) func() *specs.LinuxResources {
		return func() *specs.LinuxResources { return &specs.LinuxResources{Memory: &m} }
	}
	cpu := func(c specs.LinuxCPU) func() *specs.LinuxResources {
		return func() *specs.LinuxResources { return &specs.LinuxResources{CPU: &c} }
	}
	wd := func(ok func(d *cgroups.WeightDevice) bool) func(r *cgroups.Resources) bool {
		return func(r *cgroups.Resources) bool { return len(r.BlkioWeightDevice) == 1 && ok(r.BlkioWeightDevice[0]) }
	}
	huge := func() *specs.LinuxResources {
		return &specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 1 << 22}}}
	}
	prio := func() *specs.LinuxResources {
		return &specs.LinuxResources{Network: &specs.LinuxNetwork{Priorities: []specs.LinuxInterfacePriority{{Name: "eth0", Priority: 5}}}}
	}
	rdma := func() *specs.LinuxResources {
		return &specs.LinuxResources{Rdma: map[string]specs.LinuxRdma{"mlx5_0": {HcaHandles: u32(10), HcaObjects: u32(20)}}}
	}
	cases := map[string]resourceCase{
		"Devices[].Allow":  {res: device, refused: "devices"},
		"Devices[].Type":   {res: device, refused: "devices"},
		"Devices[].Major":  {res: device, refused: "devices"},
		"Devices[].Minor":  {res: device, refused: "devices"},
		"Devices[].Access": {res: device, refused: "devices"},

		"Memory.Limit":       {res: mem(specs.LinuxMemory{Limit: i64(1 << 30)}), applied: func(r *cgroups.Resources) bool { return r.Memory == 1<<30 }},
		"Memory.Reservation": {res: mem(specs.LinuxMemory{Reservation: i64(1 << 29)}), applied: func(r *cgroups.Resources) bool { return r.MemoryReservation == 1<<29 }},
		"Memory.Swap":        {res: mem(specs.LinuxMemory{Swap: i64(2 << 30)}), applied: func(r *cgroups.Resources) bool { return r.MemorySwap == 2<<30 }},
		"Memory.Kernel":      {res: mem(specs.LinuxMemory{Kernel: i64(1 << 20)}), refused: "memory.kernel"},
		"Memory.KernelTCP":   {res: mem(specs.LinuxMemory{KernelTCP: i64(1 << 20)}), refused: "memory.kernelTCP"},
		"Memory.Swappiness": {res: mem(specs.LinuxMemory{Swappiness: u64(10)}),
			applied: func(r *cgroups.Resources) bool { return r.MemorySwappiness != nil && *r.MemorySwappiness == 10 }},
		"Memory.DisableOOMKiller": {res: mem(specs.LinuxMemory{DisableOOMKiller: boolp(true)}),
			applied: func(r *cgroups.Resources) bool { return r.OomKillDisable }},
		"Memory.UseHierarchy": {res: mem(specs.LinuxMemory{UseHierarchy: boolp(false)}), refused: "memory.useHierarchy"},
		"Memory.CheckBeforeUpdate": {res: mem(specs.LinuxMemory{CheckBeforeUpdate: boolp(true)}),
			applied: func(r *cgroups.Resources) bool { return r.MemoryCheckBeforeUpdate }},

		"CPU.Shares": {res: cpu(specs.LinuxCPU{Shares: u64(512)}), applied: func(r *cgroups.Resources) bool {
			return r.CpuShares == 512 && r.CpuWeight == cgroups.ConvertCPUSharesToCgroupV2Value(512)
		}},
		"CPU.Quota":           {res: cpu(specs.LinuxCPU{Quota: i64(50000)}), applied: func(r *cgroups.Resources) bool { return r.CpuQuota == 50000 }},
		"CPU.Burst":           {res: cpu(specs.LinuxCPU{Burst: u64(1000)}), applied: func(r *cgroups.Resources) bool { return r.CpuBurst != nil && *r.CpuBurst == 1000 }},
		"CPU.Period":          {res: cpu(specs.LinuxCPU{Period: u64(200000)}), applied: func(r *cgroups.Resources) bool { return r.CpuPeriod == 200000 }},
		"CPU.RealtimeRuntime": {res: cpu(specs.LinuxCPU{RealtimeRuntime: i64(950)}), applied: func(r *cgroups.Resources) bool { return r.CpuRtRuntime == 950 }},
		"CPU.RealtimePeriod":  {res: cpu(specs.LinuxCPU{RealtimePeriod: u64(1000000)}), applied: func(r *cgroups.Resources) bool { return r.CpuRtPeriod == 1000000 }},
		"CPU.Cpus":            {res: cpu(specs.LinuxCPU{Cpus: "0-1"}), applied: func(r *cgroups.Resources) bool { return r.CpusetCpus == "0-1" }},
		"CPU.Mems":            {res: cpu(specs.LinuxCPU{Mems: "0"}), applied: func(r *cgroups.Resources) bool { return r.CpusetMems == "0" }},
		"CPU.Idle":            {res: cpu(specs.LinuxCPU{Idle: i64(1)}), applied: func(r *cgroups.Resources) bool { return r.CPUIdle != nil && *r.CPUIdle == 1 }},

		"Pids.Limit": {res: func() *specs.LinuxResources { return &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(77)}} },
			applied: func(r *cgroups.Resources) bool { return r.PidsLimit != nil && *r.PidsLimit == 77 }},

		"BlockIO.Weight": {res: func() *specs.LinuxResources {
			return &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{Weight: u16(300)}}
		},
			applied: func(r *cgroups.Resources) bool { return r.BlkioWeight == 300 }},
		"BlockIO.LeafWeight": {res: func() *specs.LinuxResources {
			return &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{LeafWeight: u16(400)}}
		},
			applied: func(r *cgroups.Resources) bool { return r.BlkioLeafWeight == 400 }},
		"BlockIO.WeightDevice[].Major":      {res: weightDevices, applied: wd(func(d *cgroups.WeightDevice) bool { return d.Major == 8 })},
		"BlockIO.WeightDevice[].Minor":      {res: weightDevices, applied: wd(func(d *cgroups.WeightDevice) bool { return d.Minor == 16 })},
		"BlockIO.WeightDevice[].Weight":     {res: weightDevices, applied: wd(func(d *cgroups.WeightDevice) bool { return d.Weight == 500 })},
		"BlockIO.WeightDevice[].LeafWeight": {res: weightDevices, applied: wd(func(d *cgroups.WeightDevice) bool { return d.LeafWeight == 600 })},

		"HugepageLimits[].Pagesize": {res: huge, applied: func(r *cgroups.Resources) bool {
			return len(r.HugetlbLimit) == 1 && r.HugetlbLimit[0].Pagesize == "2MB"
		}},
		"HugepageLimits[].Limit": {res: huge, applied: func(r *cgroups.Resources) bool { return len(r.HugetlbLimit) == 1 && r.HugetlbLimit[0].Limit == 1<<22 }},

		"Network.ClassID": {res: func() *specs.LinuxResources {
			return &specs.LinuxResources{Network: &specs.LinuxNetwork{ClassID: u32(0x100001)}}
		},
			applied: func(r *cgroups.Resources) bool { return r.NetClsClassid == 0x100001 }},
		"Network.Priorities[].Name": {res: prio, applied: func(r *cgroups.Resources) bool {
			return len(r.NetPrioIfpriomap) == 1 && r.NetPrioIfpriomap[0].Interface == "eth0"
		}},
		"Network.Priorities[].Priority": {res: prio, applied: func(r *cgroups.Resources) bool {
			return len(r.NetPrioIfpriomap) == 1 && r.NetPrioIfpriomap[0].Priority == 5
		}},

		"Rdma[].HcaHandles": {res: rdma, applied: func(r *cgroups.Resources) bool {
			h := r.Rdma["mlx5_0"].HcaHandles
			return h != nil && *h == 10
		}},
		"Rdma[].HcaObjects": {res: rdma, applied: func(r *cgroups.Resources) bool {
			o := r.Rdma["mlx5_0"].HcaObjects
			return o != nil && *o == 20
		}},

		// This host's containers get cgroup v1 (see TestUpdateV2 for v2).
		"Unified": {res: func() *specs.LinuxResources {
			return &specs.LinuxResources{Unified: map[string]string{"memory.high": "1G"}}
		},
			refused: "unified"},
	}
	for _, t := range []struct {
		name string
		set  func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice)
		get  func(r *cgroups.Resources) []*cgroups.ThrottleDevice
	}{
		{"ThrottleReadBpsDevice", func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice) { b.ThrottleReadBpsDevice = d },
			func(r *cgroups.Resources) []*cgroups.ThrottleDevice { return r.BlkioThrottleReadBpsDevice }},
		{"ThrottleWriteBpsDevice", func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice) { b.ThrottleWriteBpsDevice = d },
			func(r *cgroups.Resources) []*cgroups.ThrottleDevice { return r.BlkioThrottleWriteBpsDevice }},
		{"ThrottleReadIOPSDevice", func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice) { b.ThrottleReadIOPSDevice = d },
			func(r *cgroups.Resources) []*cgroups.ThrottleDevice { return r.BlkioThrottleReadIOPSDevice }},
		{"ThrottleWriteIOPSDevice", func(b *specs.LinuxBlockIO, d []specs.LinuxThrottleDevice) { b.ThrottleWriteIOPSDevice = d },
			func(r *cgroups.Resources) []*cgroups.ThrottleDevice { return r.BlkioThrottleWriteIOPSDevice }},
	} {
		for k, v := range throttleCases(t.name, t.set, t.get) {
			cases[k] = v
		}
	}
	return cases
}

// TestUpdateAppliesOrRefusesEveryField walks specs.LinuxResources and its
// nested structs by reflection: every leaf must have a case, and each case
// must either arrive in the cgroup resources or be refused with a coded
// error naming the field. A field added to the spec fails here until
// applyResources handles it.
func TestUpdateAppliesOrRefusesEveryField(t *testing.T) {
	cases := resourceCases()
	leaves := leafFields(reflect.TypeOf(specs.LinuxResources{}), "", nil)
	sort.Strings(leaves)
	seen := map[string]bool{}
	for _, l := range leaves {
		seen[l] = true
		if _, ok := cases[l]; !ok {
			t.Errorf("specs.LinuxResources field %s is neither applied nor refused by a case here", l)
		}
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("case %s names no field of specs.LinuxResources", name)
		}
	}
	for name, c := range cases {
		cur := &cgroups.Resources{}
		err := applyResources(cur, c.res(), false, allKnobs)
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) || errcode.Of(err) == errcode.Internal {
				t.Errorf("%s: got %v, want a coded refusal naming %s", name, err, c.refused)
			}
			if !reflect.DeepEqual(cur, &cgroups.Resources{}) {
				t.Errorf("%s: refused, yet the resources changed: %+v", name, cur)
			}
		case err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case !c.applied(cur):
			t.Errorf("%s: not applied: %+v", name, cur)
		}
	}
}

// TestUpdateV2: on cgroup v2 the same walk holds (every leaf applied or
// refused), with the v1-only settings refused and unified applied.
func TestUpdateV2(t *testing.T) {
	v1Only := map[string]string{"Memory.Swappiness": "memory.swappiness", "Memory.DisableOOMKiller": "memory.disableOOMKiller",
		"CPU.RealtimeRuntime": "cpu.realtimeRuntime", "CPU.RealtimePeriod": "cpu.realtimePeriod", "BlockIO.LeafWeight": "blockIO.leafWeight",
		"BlockIO.WeightDevice[].LeafWeight": "leafWeight", "BlockIO.WeightDevice[].Major": "leafWeight",
		"BlockIO.WeightDevice[].Minor": "leafWeight", "BlockIO.WeightDevice[].Weight": "leafWeight",
		"Network.ClassID": "network.classID", "Network.Priorities[].Name": "network.priorities", "Network.Priorities[].Priority": "network.priorities"}
	// A v2 cgroup has only the v2 files: knobAvailable says so by having
	// no file list for v1-only settings.
	v2Knobs := func(k knob) bool { return len(k.v2) > 0 }
	for name, c := range resourceCases() {
		cur := &cgroups.Resources{}
		err := applyResources(cur, c.res(), true, v2Knobs)
		switch {
		case name == "Unified":
			if err != nil || cur.Unified["memory.high"] != "1G" {
				t.Errorf("unified on v2: %v %+v", err, cur.Unified)
			}
		case v1Only[name] != "":
			if errcode.Of(err) != errcode.Unenforceable || !strings.Contains(err.Error(), v1Only[name]) {
				t.Errorf("%s on v2: got %v, want Unenforceable naming %s", name, err, v1Only[name])
			}
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s on v2: got %v, want a refusal", name, err)
			}
		case err != nil || !c.applied(cur):
			t.Errorf("%s on v2: %v %+v", name, err, cur)
		}
	}
}

// TestUpdateRefusals: values libcontainer would skip (zero where zero
// means "unchanged"), out-of-range values and missing cgroup files are
// refused, and a refusal applies nothing, not even the valid fields next
// to it.
func TestUpdateRefusals(t *testing.T) {
	cases := []struct {
		name  string
		res   *specs.LinuxResources
		avail knobAvailable
		code  errcode.Code
		field string
	}{
		{"memory 0", &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: i64(0)}}, allKnobs, errcode.ConfigInvalid, "memory.limit"},
		{"reservation 0", &specs.LinuxResources{Memory: &specs.LinuxMemory{Reservation: i64(0)}}, allKnobs, errcode.ConfigInvalid, "memory.reservation"},
		{"swap 0", &specs.LinuxResources{Memory: &specs.LinuxMemory{Swap: i64(0)}}, allKnobs, errcode.ConfigInvalid, "memory.swap"},
		{"swappiness 101", &specs.LinuxResources{Memory: &specs.LinuxMemory{Swappiness: u64(101)}}, allKnobs, errcode.ConfigInvalid, "memory.swappiness"},
		{"shares 0", &specs.LinuxResources{CPU: &specs.LinuxCPU{Shares: u64(0)}}, allKnobs, errcode.ConfigInvalid, "cpu.shares"},
		{"quota 0", &specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: i64(0)}}, allKnobs, errcode.ConfigInvalid, "cpu.quota"},
		{"period 0", &specs.LinuxResources{CPU: &specs.LinuxCPU{Period: u64(0)}}, allKnobs, errcode.ConfigInvalid, "cpu.period"},
		{"rt runtime 0", &specs.LinuxResources{CPU: &specs.LinuxCPU{RealtimeRuntime: i64(0)}}, allKnobs, errcode.ConfigInvalid, "cpu.realtimeRuntime"},
		{"rt period 0", &specs.LinuxResources{CPU: &specs.LinuxCPU{RealtimePeriod: u64(0)}}, allKnobs, errcode.ConfigInvalid, "cpu.realtimePeriod"},
		{"blkio weight 0", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{Weight: u16(0)}}, allKnobs, errcode.ConfigInvalid, "blockIO.weight"},
		{"blkio leaf weight 0", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{LeafWeight: u16(0)}}, allKnobs, errcode.ConfigInvalid, "blockIO.leafWeight"},
		{"weight device without weights", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{WeightDevice: []specs.LinuxWeightDevice{{}}}}, allKnobs, errcode.ConfigInvalid, "blockIO.weightDevice[0]"},
		{"weight device weight 0", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{WeightDevice: []specs.LinuxWeightDevice{{Weight: u16(0)}}}}, allKnobs, errcode.ConfigInvalid, "blockIO.weightDevice[0]"},
		{"classID 0", &specs.LinuxResources{Network: &specs.LinuxNetwork{ClassID: u32(0)}}, allKnobs, errcode.ConfigInvalid, "network.classID"},
		{"priority without name", &specs.LinuxResources{Network: &specs.LinuxNetwork{Priorities: []specs.LinuxInterfacePriority{{Priority: 1}}}}, allKnobs, errcode.ConfigInvalid, "network.priorities[0].name"},
		{"rdma entry without limits", &specs.LinuxResources{Rdma: map[string]specs.LinuxRdma{"mlx": {}}}, allKnobs, errcode.ConfigInvalid, "rdma.mlx"},
		{"hugepage without size", &specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Limit: 1}}}, allKnobs, errcode.ConfigInvalid, "hugepageLimits[0].pageSize"},
		{"no hugetlb controller", &specs.LinuxResources{HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 1}}},
			func(k knob) bool { return k.ctrl != "hugetlb" }, errcode.Unenforceable, "hugepageLimits[0]"},
		{"no cpu burst file", &specs.LinuxResources{CPU: &specs.LinuxCPU{Burst: u64(10)}},
			func(k knob) bool { return k.v1[0] != "cpu.cfs_burst_us" }, errcode.Unenforceable, "cpu.burst"},
		{"no blkio weight file", &specs.LinuxResources{BlockIO: &specs.LinuxBlockIO{Weight: u16(100)}},
			func(k knob) bool { return k.ctrl != "blkio" }, errcode.Unenforceable, "blockIO.weight"},
		{"no pids controller", &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: i64(10)}},
			func(k knob) bool { return k.ctrl != "pids" }, errcode.Unenforceable, "pids.limit"},
		{"re-enable the OOM killer", &specs.LinuxResources{Memory: &specs.LinuxMemory{DisableOOMKiller: boolp(false)}}, allKnobs, errcode.ConfigInvalid, "memory.disableOOMKiller"},
	}
	for _, tc := range cases {
		// A valid field beside the refused one: it must not be applied.
		tc.res.Pids = nil
		if tc.name == "no pids controller" {
			tc.res.Pids = &specs.LinuxPids{Limit: i64(10)}
		} else {
			tc.res.Pids = &specs.LinuxPids{Limit: i64(42)}
		}
		cur := &cgroups.Resources{OomKillDisable: true, CpuShares: 1024}
		before := *cur
		err := applyResources(cur, tc.res, false, tc.avail)
		if errcode.Of(err) != tc.code || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want %s naming %s", tc.name, err, tc.code, tc.field)
		}
		if !reflect.DeepEqual(*cur, before) {
			t.Errorf("%s: refused update changed the resources: %+v", tc.name, cur)
		}
	}
	// The OOM killer left on, asked to stay on: nothing to do, accepted.
	cur := &cgroups.Resources{}
	if err := applyResources(cur, &specs.LinuxResources{Memory: &specs.LinuxMemory{DisableOOMKiller: boolp(false)}}, false, allKnobs); err != nil {
		t.Errorf("disableOOMKiller=false with the killer enabled: %v", err)
	}
}

// TestUpdateMerges: an update changes only what it names; quota alone
// keeps the period, a device entry is updated in place, and the original
// resources (libcontainer's rollback copy) are left untouched.
func TestUpdateMerges(t *testing.T) {
	orig := &cgroups.Resources{CpuQuota: 10000, CpuPeriod: 100000, Memory: 1 << 30, CpuShares: 1024,
		BlkioThrottleReadBpsDevice: []*cgroups.ThrottleDevice{cgroups.NewThrottleDevice(8, 0, 100)},
		HugetlbLimit:               []*cgroups.HugepageLimit{{Pagesize: "2MB", Limit: 1}}}
	cur := cloneResources(orig)
	d := specs.LinuxThrottleDevice{Rate: 200}
	d.Major = 8
	err := applyResources(cur, &specs.LinuxResources{
		CPU:            &specs.LinuxCPU{Quota: i64(20000)},
		BlockIO:        &specs.LinuxBlockIO{ThrottleReadBpsDevice: []specs.LinuxThrottleDevice{d}},
		HugepageLimits: []specs.LinuxHugepageLimit{{Pagesize: "2MB", Limit: 2}},
	}, false, allKnobs)
	if err != nil {
		t.Fatal(err)
	}
	if cur.CpuQuota != 20000 || cur.CpuPeriod != 100000 || cur.Memory != 1<<30 || cur.CpuShares != 1024 {
		t.Errorf("merge: %+v", cur)
	}
	if len(cur.BlkioThrottleReadBpsDevice) != 1 || cur.BlkioThrottleReadBpsDevice[0].Rate != 200 {
		t.Errorf("throttle not updated in place: %v", cur.BlkioThrottleReadBpsDevice)
	}
	if len(cur.HugetlbLimit) != 1 || cur.HugetlbLimit[0].Limit != 2 {
		t.Errorf("hugetlb not updated in place: %v", cur.HugetlbLimit)
	}
	if orig.BlkioThrottleReadBpsDevice[0].Rate != 100 || orig.HugetlbLimit[0].Limit != 1 || orig.CpuQuota != 10000 {
		t.Errorf("the original resources were changed: %+v", orig)
	}
}
