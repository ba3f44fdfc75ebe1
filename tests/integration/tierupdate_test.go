package integration

import (
	"strconv"
	"strings"
	"testing"
)

// TestUpdateCannotLoosenTier: on a moderate container (memory+swap pinned
// to its 1 GiB memory limit), every resource field is checked against the
// tier in the library: swap -1 (unlimited) is refused with
// SANDBOX_POLICY_CONFLICT and memory.memsw stays at 1 GiB; a memory, pids
// or cpu ceiling above the tier is refused; what only restricts (shares)
// is applied; lowering memory lowers memory+swap with it, so no room to
// swap opens. Each decision is audited.
func TestUpdateCannotLoosenTier(t *testing.T) {
	s := newSbx(t)
	spec := compile(t, "moderate", nil)
	spec.Process.Args = []string{"sleep", "300"}
	s.must("run", "-d", "--bundle", bundle(t, spec), "tu")
	pid := int(s.state("tu")["pid"].(float64))
	cpu, mem, pids := cgroupOf(t, pid, "cpu"), cgroupOf(t, pid, "memory"), cgroupOf(t, pid, "pids")
	update := func(res string) out { t.Helper(); return s.updateResources("tu", res) }
	gib := strconv.Itoa(1 << 30)
	if got := readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); got != gib {
		t.Fatalf("moderate starts with memory+swap %s, want %s", got, gib)
	}
	for _, tc := range []struct{ res, want string }{
		{`{"memory":{"swap":-1}}`, "allows no swap"},
		{`{"memory":{"limit":-1}}`, "unlimited memory"},
		{`{"memory":{"limit":2147483648}}`, "above tier moderate"},
		{`{"pids":{"limit":100000}}`, "above tier moderate"},
		{`{"cpu":{"quota":400000,"period":100000}}`, "cpu quota 400000/100000 is above"},
		{`{"cpu":{"period":10000}}`, "cpu quota 200000/10000 is above"},
		{`{"cpu":{"realtimeRuntime":1000}}`, "realtime"},
		{`{"memory":{"disableOOMKiller":true}}`, "killed"},
		{`{"devices":[{"allow":true,"access":"rwm"}]}`, "device allowlist"},
	} {
		r := update(tc.res)
		if r.code != 3 || !strings.HasPrefix(r.stderr, "sbxrun: SANDBOX_POLICY_CONFLICT: ") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("update %s: exit %d %q, want SANDBOX_POLICY_CONFLICT (%s)", tc.res, r.code, r.stderr, tc.want)
		}
	}
	if got := readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); got != gib {
		t.Errorf("a refused update changed memory+swap to %s", got)
	}
	if got := readCgroupFile(t, pids, "pids.max"); got != "512" {
		t.Errorf("a refused update changed pids.max to %s", got)
	}
	// Paired allowed updates: they restrict, so they apply.
	if r := update(`{"cpu":{"shares":2}}`); r.code != 0 {
		t.Fatalf("shares: %+v", r)
	}
	if got := readCgroupFile(t, cpu, "cpu.shares"); got != "2" {
		t.Errorf("cpu.shares = %s, want 2", got)
	}
	if r := update(`{"memory":{"limit":268435456}}`); r.code != 0 {
		t.Fatalf("lower memory: %+v", r)
	}
	if l, sw := readCgroupFile(t, mem, "memory.limit_in_bytes"), readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); l != "268435456" || sw != "268435456" {
		t.Errorf("after lowering memory: limit %s, memory+swap %s (want both 268435456: no room to swap)", l, sw)
	}
	if r := update(`{"pids":{"limit":100}}`); r.code != 0 {
		t.Fatalf("lower pids: %+v", r)
	}
	if got := readCgroupFile(t, pids, "pids.max"); got != "100" {
		t.Errorf("pids.max = %s, want 100", got)
	}
	log := s.must("log", "--json")
	if strings.Count(log, `"operation":"update","target":"tu","result":"blocked"`) != 9 || strings.Count(log, `"operation":"update","target":"tu","result":"allowed"`) != 3 {
		t.Errorf("update decisions not each audited:\n%s", log)
	}
}
