package seatbelt

import (
	"os"
	"reflect"
	"testing"
	"time"
)

func readLog(t *testing.T, f Filter) []Violation {
	t.Helper()
	file, err := os.Open("testdata/log-stream.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var got []Violation
	if err := ScanViolations(file, f, func(v Violation) { got = append(got, v) }); err != nil {
		t.Fatal(err)
	}
	return got
}

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05-0700", s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestViolationsByTag keeps the denials carrying the run's tag after the
// first line; a tag that appears only in the denied path (chosen by the
// sandboxed process) does not count.
func TestViolationsByTag(t *testing.T) {
	want := []Violation{
		{Time: at("2026-11-21 10:11:12.123456+0100"), PID: 4242, Process: "cat", Operation: "file-read-data", Target: "/Users/x/.ssh/id_rsa"},
		{Time: at("2026-11-21 10:11:16+0100"), PID: 4243, Process: "sh", Operation: "process-exec*", Target: "/private/var/folders/xy/T/sbxrun-test/payload"},
		{Time: at("2026-11-21 10:11:17+0100"), PID: 4244, Process: "python3.12", Operation: "sysctl-read", Target: "kern.bootargs"},
	}
	if got := readLog(t, Filter{Tag: "sbxrun-test"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestViolationsByPID(t *testing.T) {
	got := readLog(t, Filter{PIDs: map[int]bool{5000: true, 777: true}})
	want := []Violation{
		{Time: at("2026-11-21 10:11:13.000001+0100"), PID: 777, Process: "Google Chrome Helper (Renderer)", Operation: "mach-lookup", Target: "com.apple.windowserver.active"},
		{Time: at("2026-11-21 10:11:14.5+0100"), PID: 5000, Process: "curl", Operation: "network-outbound", Target: "93.184.216.34:443"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestViolationsEmptyFilterSelectsNothing(t *testing.T) {
	if got := readLog(t, Filter{}); len(got) != 0 {
		t.Fatalf("an empty filter selected %v", got)
	}
}

func TestViolationWithoutTarget(t *testing.T) {
	v, ok := Filter{PIDs: map[int]bool{9: true}}.Parse([]byte(`{"eventMessage":"Sandbox: a(9) deny(1) process-fork","timestamp":"bad"}`))
	if !ok || v.Operation != "process-fork" || v.Target != "" || !v.Time.IsZero() {
		t.Fatalf("%+v %v", v, ok)
	}
}

func TestViolationRecord(t *testing.T) {
	v := Violation{Time: time.Date(2026, 1, 28, 10, 30, 5, 0, time.UTC), PID: 42, Process: "cat", Operation: "file-read-data", Target: "/Users/x/.ssh/id_rsa"}
	r := v.Record("strict", "t1")
	if r.Timestamp != "2026-01-28T10:30:05Z" || r.Result != "blocked" || r.Operation != "file-read-data" || r.Target != "/Users/x/.ssh/id_rsa" || r.Tier != "strict" || r.Agent != "cat" {
		t.Errorf("record: %+v", r)
	}
}
