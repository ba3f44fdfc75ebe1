package enforce

import (
	"encoding/json"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sbxrun/sbxrun/errcode"
)

// TestCheckUpdate: each field against moderate (1 GiB memory, memory+swap
// pinned to it, 2 CPUs, 512 pids), with the container currently lowered to
// 256 MiB and 1 CPU: ceilings may only go down, swap must follow the
// memory limit the container will have, what only restricts passes.
func TestCheckUpdate(t *testing.T) {
	g := grants(t, "moderate")
	cur := &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: ptr(int64(256 << 20)), Swap: ptr(int64(256 << 20))},
		CPU: &specs.LinuxCPU{Quota: ptr(int64(100000)), Period: ptr(uint64(100000))}, Pids: &specs.LinuxPids{Limit: ptr(int64(100))}}
	cases := []struct {
		res  string
		code errcode.Code
		want string
	}{
		{`{"memory":{"swap":-1}}`, errcode.PolicyConflict, "allows no swap"},
		{`{"memory":{"swap":1073741824}}`, errcode.PolicyConflict, "allows no swap"},
		{`{"memory":{"swap":268435456}}`, "", ""},
		{`{"memory":{"swap":1000}}`, errcode.ConfigInvalid, "below the memory limit"},
		{`{"memory":{"limit":2147483648}}`, errcode.PolicyConflict, "above tier moderate"},
		{`{"memory":{"limit":1}}`, errcode.ConfigInvalid, "below the minimum"},
		{`{"memory":{"limit":536870912}}`, "", "memory.swap set to 536870912"},
		{`{"memory":{"limit":536870912,"swap":536870912}}`, "", ""},
		{`{"memory":{"reservation":2147483648}}`, errcode.PolicyConflict, "reservation"},
		{`{"memory":{"disableOOMKiller":true}}`, errcode.PolicyConflict, "killed"},
		{`{"memory":{"swappiness":200}}`, errcode.ConfigInvalid, "swappiness"},
		{`{"cpu":{"quota":300000,"period":100000}}`, errcode.PolicyConflict, "is above"},
		{`{"cpu":{"quota":-1,"period":100000}}`, errcode.PolicyConflict, "unlimited"},
		{`{"cpu":{"period":10000}}`, errcode.PolicyConflict, "100000/10000 is above"},
		{`{"cpu":{"period":400000}}`, "", ""},
		{`{"cpu":{"quota":150000}}`, "", ""},
		{`{"cpu":{"burst":500000}}`, errcode.PolicyConflict, "burst"},
		{`{"cpu":{"realtimeRuntime":10}}`, errcode.PolicyConflict, "realtime"},
		{`{"cpu":{"shares":2,"cpus":"0","mems":"0"}}`, "", ""},
		{`{"cpu":{"shares":1}}`, errcode.ConfigInvalid, "shares"},
		{`{"pids":{"limit":513}}`, errcode.PolicyConflict, "pids.limit 513"},
		{`{"pids":{"limit":-1}}`, errcode.PolicyConflict, "pids.limit -1"},
		{`{"pids":{"limit":50}}`, "", ""},
		{`{"devices":[{"allow":true,"access":"rwm"}]}`, errcode.PolicyConflict, "device allowlist"},
		{`{"unified":{"memory.max":"max"}}`, errcode.PolicyConflict, "unified"},
		{`{"blockIO":{"weight":100},"network":{"classID":7}}`, "", ""},
	}
	for _, tc := range cases {
		var res specs.LinuxResources
		if err := json.Unmarshal([]byte(tc.res), &res); err != nil {
			t.Fatal(err)
		}
		changes, err := CheckUpdate(&res, cur, g)
		if tc.code == "" {
			if err != nil || (tc.want != "" && !strings.Contains(strings.Join(changes, "\n"), tc.want)) {
				t.Errorf("%s: %v %v", tc.res, err, changes)
			}
			continue
		}
		if errcode.Of(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s (%s)", tc.res, err, tc.code, tc.want)
		}
	}
	// Without knowing the current values, a quota or period alone cannot be
	// checked: refused.
	if _, err := CheckUpdate(&specs.LinuxResources{CPU: &specs.LinuxCPU{Period: ptr(uint64(10000))}}, nil, g); errcode.Of(err) != errcode.PolicyConflict {
		t.Errorf("period alone, current unknown: %v", err)
	}
	rl := grants(t, "moderate")
	rl.Limits.Cgroups = false
	if _, err := CheckUpdate(&specs.LinuxResources{Pids: &specs.LinuxPids{Limit: ptr(int64(1))}}, cur, rl); errcode.Of(err) != errcode.Unenforceable {
		t.Errorf("no cgroup limits: %v", err)
	}
}
