package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// cgroupPids lists the pids in a v1 cgroup directory.
func cgroupPids(t *testing.T, dir string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	return pids
}

// waitFor polls cond every 20ms for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// killCgroupOnCleanup makes sure no process a failed test left in dir
// outlives it.
func killCgroupOnCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			pids := cgroupPids(t, dir)
			if len(pids) == 0 {
				return
			}
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestKillAllFreezesForkLoop: `kill --all` signals every process of a
// container whose processes keep forking, with none escaping. The
// container shares the host pid namespace, so its init's death does not
// take the others along: only signalling the frozen cgroup gets them all.
// 3000 sleepers come first and four fork loops last, so signalling the
// pids one by one, unfrozen, would reach the loops only after they had
// forked past the list it read.
func TestKillAllFreezesForkLoop(t *testing.T) {
	for _, sig := range []string{"KILL", "TERM"} {
		t.Run(sig, func(t *testing.T) {
			s := newSbx(t)
			spec := plainSpec(t, "sh", "-c",
				`i=0; while [ $i -lt 3000 ]; do sleep 1000 & i=$((i+1)); done; for j in 1 2 3 4; do (while :; do sleep 1000 & done) & done; wait`)
			dropNS(spec, specs.PIDNamespace)
			limit := int64(20000)
			spec.Linux.Resources = &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &limit}}
			id := "forks-" + strings.ToLower(sig)
			s.must("run", "-d", "--bundle", bundle(t, spec), id)
			pid := int(s.state(id)["pid"].(float64))
			cg := cgroupOf(t, pid, "pids")
			killCgroupOnCleanup(t, cg)
			if !waitFor(60*time.Second, func() bool { return len(cgroupPids(t, cg)) > 3100 }) {
				t.Fatalf("the fork loop never got going: %d processes", len(cgroupPids(t, cg)))
			}
			s.must("kill", "--all", id, sig)
			if !waitFor(10*time.Second, func() bool { return len(cgroupPids(t, cg)) == 0 }) {
				t.Fatalf("kill --all %s: %d processes survived in %s", sig, len(cgroupPids(t, cg)), cg)
			}
			waitStatus(t, s, id, "stopped")
			s.must("delete", id)
		})
	}
}

// TestKillInitOnlyVersusAll: a signal the init ignores (pid 1 of its own
// pid namespace has no TERM handler) sent by `kill` leaves its children
// running; `kill --all` reaches them, and the init, left without
// children, exits.
func TestKillInitOnlyVersusAll(t *testing.T) {
	s := newSbx(t)
	spec := plainSpec(t, "sh", "-c", "sleep 1000 & sleep 1000 & wait")
	s.must("run", "-d", "--bundle", bundle(t, spec), "ka")
	pid := int(s.state("ka")["pid"].(float64))
	cg := cgroupOf(t, pid, "pids")
	killCgroupOnCleanup(t, cg)
	if !waitFor(5*time.Second, func() bool { return len(cgroupPids(t, cg)) == 3 }) {
		t.Fatalf("expected init and two sleepers, got %v", cgroupPids(t, cg))
	}
	s.must("kill", "ka", "TERM")
	time.Sleep(300 * time.Millisecond)
	if got := cgroupPids(t, cg); len(got) != 3 || s.state("ka")["status"] != "running" {
		t.Fatalf("kill TERM of the init only: processes %v, status %v", got, s.state("ka")["status"])
	}
	s.must("kill", "--all", "ka", "TERM")
	if !waitFor(5*time.Second, func() bool { return len(cgroupPids(t, cg)) == 0 }) {
		t.Fatalf("kill --all TERM: left %v", cgroupPids(t, cg))
	}
	waitStatus(t, s, "ka", "stopped")
}

// TestKillAllPausedContainer: `kill --all` leaves a paused container
// paused, the signal pending until resume; KILL thaws it so its processes
// can die.
func TestKillAllPausedContainer(t *testing.T) {
	s := newSbx(t)
	s.must("run", "-d", "--bundle", bundle(t, plainSpec(t, "sh", "-c", "sleep 1000 & sleep 1000 & wait; exec sleep 1000")), "pz")
	pid := int(s.state("pz")["pid"].(float64))
	cg := cgroupOf(t, pid, "pids")
	killCgroupOnCleanup(t, cg)
	if !waitFor(5*time.Second, func() bool { return len(cgroupPids(t, cg)) == 3 }) {
		t.Fatalf("expected init and two sleepers, got %v", cgroupPids(t, cg))
	}
	s.must("pause", "pz")
	s.must("kill", "--all", "pz", "TERM")
	time.Sleep(300 * time.Millisecond)
	if st := s.state("pz")["status"]; st != "paused" || len(cgroupPids(t, cg)) != 3 {
		t.Fatalf("after kill --all TERM of a paused container: %v, %v", st, cgroupPids(t, cg))
	}
	s.must("resume", "pz")
	// The pending TERM ends both sleepers; the init (pid 1, no handler)
	// survives it and goes on to its last sleep.
	if !waitFor(5*time.Second, func() bool { p := cgroupPids(t, cg); return len(p) == 1 && p[0] == pid }) {
		t.Fatalf("after resume: %v, want only the init %d", cgroupPids(t, cg), pid)
	}
	if st := s.state("pz")["status"]; st != "running" {
		t.Fatalf("after resume: %v", st)
	}
	s.must("pause", "pz")
	s.must("kill", "--all", "pz", "KILL")
	if !waitFor(5*time.Second, func() bool { return len(cgroupPids(t, cg)) == 0 }) {
		t.Fatalf("kill --all KILL of a paused container left %v", cgroupPids(t, cg))
	}
	waitStatus(t, s, "pz", "stopped")
}

// TestStateConflictsAndNotRunning: verbs the container's state does not
// allow fail with SANDBOX_STATE_CONFLICT; signalling a stopped container
// says "container not running" (containerd matches the text); unknown
// ids are SANDBOX_NOT_FOUND "does not exist"; bad ids
// SANDBOX_CONFIG_INVALID.
func TestStateConflictsAndNotRunning(t *testing.T) {
	s := newSbx(t)
	s.must("run", "-d", "--bundle", bundle(t, plainSpec(t, "sleep", "300")), "up")
	s.must("run", "-d", "--bundle", bundle(t, plainSpec(t, "true")), "down")
	waitStatus(t, s, "down", "stopped")
	expect := func(want, text string, args ...string) {
		t.Helper()
		r := s.run("", args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, text) {
			t.Errorf("sbxrun %v: exit %d, stderr %q; want %s and %q", args, r.code, r.stderr, want, text)
		}
	}
	const conflict, notFound, invalid = "SANDBOX_STATE_CONFLICT", "SANDBOX_NOT_FOUND", "SANDBOX_CONFIG_INVALID"
	expect(conflict, "container not running", "kill", "down", "TERM")
	expect(conflict, "container not running", "kill", "--all", "down", "KILL")
	expect(conflict, "container not running", "exec", "down", "true")
	expect(conflict, "container not running", "pause", "down")
	expect(conflict, "container not running", "update", "--pids-limit", "10", "down")
	expect(conflict, "container not running", "events", "--stats", "down")
	expect(conflict, "cannot start", "start", "up")
	expect(conflict, "cannot start", "start", "down")
	expect(conflict, "use --force", "delete", "up")
	expect(conflict, "not paused", "resume", "up")
	for _, verb := range [][]string{{"state"}, {"kill"}, {"start"}, {"pause"}, {"resume"}, {"delete"}, {"ps"}, {"events", "--stats"}, {"exec"}} {
		args := append(append([]string{}, verb...), "nosuch")
		if verb[0] == "exec" {
			args = append(args, "true")
		}
		expect(notFound, "does not exist", args...)
	}
	expect(invalid, "container id", "kill", strings.Repeat("x", 201), "TERM")
	expect(invalid, "container id", "exec", "../up", "true")
	// The paired allowed cases on the running container.
	s.must("kill", "up", "CONT")
	s.must("pause", "up")
	expect(conflict, "already paused", "pause", "up")
	s.must("resume", "up")
	if st := s.state("up"); st["status"] != "running" {
		t.Errorf("up is %v", st["status"])
	}
	s.must("delete", "down")
	s.must("delete", "--force", "up")
}

// TestConcurrentCreatesOfOneID: of creates racing for one id exactly one
// wins; the others fail with SANDBOX_STATE_CONFLICT without touching the
// winner's create journal or state, and the winner deletes cleanly.
func TestConcurrentCreatesOfOneID(t *testing.T) {
	s := newSbx(t)
	b := bundle(t, plainSpec(t, "sleep", "300"))
	const n = 4
	results := make([]out, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			results[i] = s.run("", "create", "--bundle", b, "race")
		}(i)
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			wins++
		case !strings.Contains(r.stderr, "SANDBOX_STATE_CONFLICT") || !strings.Contains(r.stderr, "already exists"):
			t.Errorf("a losing create: exit %d %q", r.code, r.stderr)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates won: %+v", wins, results)
	}
	var j struct {
		CgroupPaths map[string]string `json:"cgroup_paths"`
	}
	data, err := os.ReadFile(filepath.Join(s.root, ".create-race.json"))
	if err != nil || json.Unmarshal(data, &j) != nil || len(j.CgroupPaths) == 0 {
		t.Fatalf("the winner's journal: %v %s", err, data)
	}
	st := s.state("race")
	if st["status"] != "created" {
		t.Fatalf("winner: %v", st)
	}
	pid := int(st["pid"].(float64))
	if !pidAlive(pid) {
		t.Fatalf("winner's init %d is gone", pid)
	}
	s.must("delete", "race")
	if pidAlive(pid) {
		t.Errorf("init %d survived delete", pid)
	}
	for _, p := range j.CgroupPaths {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left behind", p)
		}
	}
	if entries, _ := os.ReadDir(s.root); len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
	// The id is free again.
	s.must("create", "--bundle", b, "race")
	s.must("delete", "--force", "race")
}

// TestExecProcessScheduling: exec --process carries the scheduler, the
// I/O priority and the CPU affinity into the process, as the init's
// conversion does; without them the process gets the defaults.
func TestExecProcessScheduling(t *testing.T) {
	if n, _ := strconv.Atoi(strings.TrimSpace(mustOutput(t, "nproc"))); n < 2 {
		t.Skip("needs two CPUs to tell an affinity from the default")
	}
	s := newSbx(t)
	s.must("run", "-d", "--bundle", bundle(t, plainSpec(t, "sleep", "300")), "sched")
	script := `set -e; cat /proc/self/stat; grep Cpus_allowed_list /proc/self/status; ionice -p $$`
	run := func(p specs.Process) (nice, policy int, cpus, ionice string) {
		t.Helper()
		pf := filepath.Join(t.TempDir(), "p.json")
		os.WriteFile(pf, mustJSON(t, p), 0o644)
		got := s.must("exec", "--process", pf, "sched")
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 3 {
			t.Fatalf("exec output %q", got)
		}
		stat := strings.Fields(lines[0][strings.LastIndexByte(lines[0], ')')+2:])
		// Fields after the command: index 0 is field 3 (state).
		nice, _ = strconv.Atoi(stat[19-3])
		policy, _ = strconv.Atoi(stat[41-3])
		return nice, policy, strings.TrimSpace(strings.TrimPrefix(lines[1], "Cpus_allowed_list:")), lines[2]
	}
	base := specs.Process{Args: []string{"sh", "-c", script}, Cwd: "/", Env: []string{"PATH=/bin"}}
	nice, policy, cpus, io := run(base)
	if nice != 0 || policy != 0 || cpus != "0-"+strconv.Itoa(mustNproc(t)-1) || !strings.HasPrefix(io, "none") {
		t.Errorf("default exec: nice %d policy %d cpus %q ionice %q", nice, policy, cpus, io)
	}
	p := base
	p.Scheduler = &specs.Scheduler{Policy: specs.SchedBatch, Nice: 7}
	p.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_BE, Priority: 6}
	p.ExecCPUAffinity = &specs.CPUAffinity{Final: "1"}
	nice, policy, cpus, io = run(p)
	if nice != 7 || policy != unix.SCHED_BATCH || cpus != "1" || io != "best-effort: prio 6" {
		t.Errorf("exec with scheduler, ioPriority, execCPUAffinity: nice %d policy %d cpus %q ionice %q", nice, policy, cpus, io)
	}
}

func mustOutput(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out)
}

func mustNproc(t *testing.T) int {
	n, _ := strconv.Atoi(strings.TrimSpace(mustOutput(t, "nproc", "--all")))
	return n
}

// TestUpdateAppliesOrRefuses: update --resources writes what it is given
// into the container's v1 cgroup, and a field it cannot apply fails the
// whole update, non-zero, naming the field, with the cgroup unchanged.
func TestUpdateAppliesOrRefuses(t *testing.T) {
	s := newSbx(t)
	s.must("run", "-d", "--bundle", bundle(t, plainSpec(t, "sleep", "300")), "up")
	pid := int(s.state("up")["pid"].(float64))
	cpu, mem, pids := cgroupOf(t, pid, "cpu"), cgroupOf(t, pid, "memory"), cgroupOf(t, pid, "pids")
	update := func(res string) out { t.Helper(); return s.updateResources("up", res) }
	mustUpdate := func(res string) {
		t.Helper()
		if r := update(res); r.code != 0 {
			t.Fatalf("update %s: %+v", res, r)
		}
	}
	if got := readCgroupFile(t, cpu, "cpu.shares"); got != "1024" {
		t.Fatalf("initial cpu.shares %s", got)
	}
	mustUpdate(`{"cpu":{"shares":2}}`)
	if got := readCgroupFile(t, cpu, "cpu.shares"); got != "2" {
		t.Errorf("cpu.shares after update: %s", got)
	}
	mustUpdate(`{"memory":{"limit":67108864}}`)
	if got := readCgroupFile(t, mem, "memory.limit_in_bytes"); got != "67108864" {
		t.Errorf("memory.limit_in_bytes: %s", got)
	}
	mustUpdate(`{"memory":{"limit":134217728,"swap":268435456}}`)
	if got := readCgroupFile(t, mem, "memory.limit_in_bytes"); got != "134217728" {
		t.Errorf("memory.limit_in_bytes: %s", got)
	}
	if got := readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"); got != "268435456" {
		t.Errorf("memory.memsw.limit_in_bytes: %s", got)
	}
	mustUpdate(`{"pids":{"limit":123},"memory":{"reservation":33554432}}`)
	if got := readCgroupFile(t, pids, "pids.max"); got != "123" {
		t.Errorf("pids.max: %s", got)
	}
	if got := readCgroupFile(t, mem, "memory.soft_limit_in_bytes"); got != "33554432" {
		t.Errorf("memory.soft_limit_in_bytes: %s", got)
	}
	// The flags take the same path.
	if r := s.run("", "update", "--cpu-share", "300", "--memory-reservation", "16777216", "up"); r.code != 0 {
		t.Fatalf("update flags: %+v", r)
	}
	if got := readCgroupFile(t, cpu, "cpu.shares"); got != "300" {
		t.Errorf("cpu.shares after --cpu-share: %s", got)
	}
	if got := readCgroupFile(t, mem, "memory.soft_limit_in_bytes"); got != "16777216" {
		t.Errorf("soft limit after --memory-reservation: %s", got)
	}
	refusals := []struct{ res, code, field string }{
		{`{"cpu":{"shares":700},"memory":{"kernel":1048576}}`, "SANDBOX_CONFIG_INVALID", "memory.kernel"},
		{`{"cpu":{"shares":700},"devices":[{"allow":true,"access":"rwm"}]}`, "SANDBOX_CONFIG_INVALID", "devices"},
		{`{"cpu":{"shares":0}}`, "SANDBOX_CONFIG_INVALID", "cpu.shares"},
		{`{"cpu":{"shares":700},"unified":{"memory.high":"1G"}}`, "SANDBOX_CONFIG_INVALID", "unified"},
	}
	if _, err := os.Stat("/sys/fs/cgroup/hugetlb"); os.IsNotExist(err) {
		refusals = append(refusals, struct{ res, code, field string }{
			`{"cpu":{"shares":700},"hugepageLimits":[{"pageSize":"2MB","limit":2097152}]}`, "SANDBOX_UNENFORCEABLE", "hugepageLimits[0]"})
	}
	for _, rf := range refusals {
		r := update(rf.res)
		if r.code == 0 || !strings.Contains(r.stderr, rf.code) || !strings.Contains(r.stderr, rf.field) {
			t.Errorf("update %s: exit %d %q; want %s naming %s", rf.res, r.code, r.stderr, rf.code, rf.field)
		}
		if got := readCgroupFile(t, cpu, "cpu.shares"); got != "300" {
			t.Errorf("refused update %s changed cpu.shares to %s", rf.res, got)
		}
	}
}

// TestEventsSchemaAndOOM: `events --stats` prints runc's stats event
// whose values are the container's cgroup files; `events` reports the
// kernel killing a process of the container for memory as {"type":"oom"}.
func TestEventsSchemaAndOOM(t *testing.T) {
	s := newSbx(t)
	spec := plainSpec(t, "sh", "-c", "sleep 1000 & sleep 1000 & wait")
	memLimit, pidsLimit := int64(64<<20), int64(50)
	spec.Linux.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &memLimit}, Pids: &specs.LinuxPids{Limit: &pidsLimit}}
	s.must("run", "-d", "--bundle", bundle(t, spec), "ev")
	pid := int(s.state("ev")["pid"].(float64))
	mem, pidsCg, cpuacct := cgroupOf(t, pid, "memory"), cgroupOf(t, pid, "pids"), cgroupOf(t, pid, "cpuacct")
	waitFor(5*time.Second, func() bool { return readCgroupFile(t, pidsCg, "pids.current") == "3" })
	var ev struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data struct {
			CPU struct {
				Usage struct {
					Total uint64 `json:"total"`
				} `json:"usage"`
			} `json:"cpu"`
			Memory struct {
				Usage struct {
					Limit uint64 `json:"limit"`
					Usage uint64 `json:"usage"`
				} `json:"usage"`
				Swap struct {
					Limit uint64 `json:"limit"`
				} `json:"swap"`
			} `json:"memory"`
			Pids struct {
				Current uint64 `json:"current"`
				Limit   uint64 `json:"limit"`
			} `json:"pids"`
		} `json:"data"`
	}
	before, _ := strconv.ParseUint(readCgroupFile(t, cpuacct, "cpuacct.usage"), 10, 64)
	got := s.must("events", "--stats", "ev")
	after, _ := strconv.ParseUint(readCgroupFile(t, cpuacct, "cpuacct.usage"), 10, 64)
	if err := json.Unmarshal([]byte(got), &ev); err != nil || ev.Type != "stats" || ev.ID != "ev" {
		t.Fatalf("events --stats: %v %s", err, got)
	}
	memsw, _ := strconv.ParseUint(readCgroupFile(t, mem, "memory.memsw.limit_in_bytes"), 10, 64)
	checks := []struct {
		name      string
		got, want uint64
	}{
		{"memory.usage.limit", ev.Data.Memory.Usage.Limit, uint64(memLimit)},
		{"memory.swap.limit", ev.Data.Memory.Swap.Limit, memsw},
		{"pids.current", ev.Data.Pids.Current, 3},
		{"pids.limit", ev.Data.Pids.Limit, uint64(pidsLimit)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d (cgroup files)", c.name, c.got, c.want)
		}
	}
	if tot := ev.Data.CPU.Usage.Total; tot == 0 || tot < before || tot > after {
		t.Errorf("cpu.usage.total %d not within cpuacct.usage %d..%d", tot, before, after)
	}
	if u := ev.Data.Memory.Usage.Usage; u == 0 || u > uint64(memLimit) {
		t.Errorf("memory.usage.usage %d", u)
	}

	// OOM: a memory hog in a 16 MiB container, watched by `events`.
	oomSpec := plainSpec(t, "sh", "-c", "while :; do tail /dev/zero; sleep 0.2; done")
	small := int64(16 << 20)
	oomSpec.Linux.Resources = &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &small, Swap: &small}}
	s.must("run", "-d", "--bundle", bundle(t, oomSpec), "oom")
	evc := s.cmd("events", "--interval", "1h", "oom")
	stdout, err := evc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	evc.Stderr = os.Stderr
	if err := evc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { evc.Process.Kill(); evc.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok || l != `{"type":"oom","id":"oom"}` {
			t.Errorf("events: %q (open %v)", l, ok)
		}
	case <-time.After(30 * time.Second):
		failcnt := readCgroupFile(t, cgroupOf(t, int(s.state("oom")["pid"].(float64)), "memory"), "memory.failcnt")
		t.Fatalf("no oom event within 30s (memory.failcnt %s)", failcnt)
	}
	s.must("delete", "--force", "oom")
	// With the container gone, events ends by itself.
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); done <- evc.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("events did not end after the container was deleted")
	}
}

// openPty opens a new pseudo-terminal pair with x/sys/unix.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); sl.Close() })
	return m, sl
}

// TestRunTerminalUnderPty: `run` of a process.terminal spec, under a pty
// as a person's shell would have it: the container sees its own tty,
// output arrives, the container's terminal follows the caller's size
// (SIGWINCH included), and the exit status passes through.
func TestRunTerminalUnderPty(t *testing.T) {
	s := newSbx(t)
	spec := plainSpec(t, "sh", "-c", `tty; stty size; echo ready; while read x; do stty size; [ "$x" = q ] && exit 5; done`)
	spec.Process.Terminal = true
	master, slave := openPty(t)
	setSize := func(rows, cols uint16) {
		if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
			t.Fatal(err)
		}
	}
	setSize(30, 100)
	c := s.cmd("run", "--bundle", bundle(t, spec), "pty")
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var mu sync.Mutex
	var screen strings.Builder
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	text := func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
	seen := func(re *regexp.Regexp) bool {
		return waitFor(10*time.Second, func() bool { return re.MatchString(text()) })
	}
	if !seen(regexp.MustCompile(`ready`)) {
		c.Process.Kill()
		t.Fatalf("no output from the container: %q", text())
	}
	if !regexp.MustCompile(`(?m)^/dev/pts/\d+\r?$`).MatchString(text()) {
		t.Errorf("the container has no tty: %q", text())
	}
	if !regexp.MustCompile(`(?m)^30 100\r?$`).MatchString(text()) {
		t.Errorf("the container's terminal does not have the caller's size 30x100: %q", text())
	}
	setSize(40, 120)
	resized := regexp.MustCompile(`(?m)^40 120\r?$`)
	ok := false
	for i := 0; i < 20 && !ok; i++ {
		master.Write([]byte("s\r"))
		ok = waitFor(500*time.Millisecond, func() bool { return resized.MatchString(text()) })
	}
	if !ok {
		t.Errorf("SIGWINCH did not resize the container's terminal to 40x120: %q", text())
	}
	master.Write([]byte("q\r"))
	select {
	case err := <-done:
		if xe, ok := err.(*exec.ExitError); !ok || xe.ExitCode() != 5 {
			t.Errorf("run's exit: %v, want status 5; screen %q", err, text())
		}
	case <-time.After(15 * time.Second):
		c.Process.Kill()
		t.Fatalf("run did not end: %q", text())
	}
}
