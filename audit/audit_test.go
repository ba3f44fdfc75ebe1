package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
)

func TestAppendVerify(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "sub", "audit.jsonl"))
	for i := 0; i < 5; i++ {
		if _, err := l.Append(Record{Kind: KindSelection, Operation: "bind", Connector: fmt.Sprint("c", i), Result: ResultAllowed}); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(l.Path)
	sum, err := Verify(bytes.NewReader(data))
	if err != nil || sum.Count != 5 {
		t.Fatalf("Verify = %+v, %v", sum, err)
	}
	fi, _ := os.Stat(l.Path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode = %v, want 0600", fi.Mode().Perm())
	}
}

// The seed's example records (SPEC-SANDBOX-01) are records of this log:
// decoding one and encoding it again keeps every field and value.
func TestSeedExampleExpressible(t *testing.T) {
	seed := `{"timestamp":"2026-01-28T10:30:05Z","agent":"code-architect","operation":"read","target":"./.env","result":"blocked","policy":"sensitive-file-pattern","reason":"Matches blocked pattern: **/.env*"}`
	var r Record
	dec := json.NewDecoder(strings.NewReader(seed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	var back, orig map[string]any
	b, _ := json.Marshal(r)
	json.Unmarshal(b, &back)
	json.Unmarshal([]byte(seed), &orig)
	for k, v := range orig {
		if back[k] != v {
			t.Errorf("%s: %v != %v", k, back[k], v)
		}
	}
	l := Open(filepath.Join(t.TempDir(), "a.jsonl"))
	stored, err := l.Append(r)
	if err != nil || stored.Timestamp != "2026-01-28T10:30:05Z" {
		t.Fatalf("append kept timestamp? %v %v", stored.Timestamp, err)
	}
}

func tamper(t *testing.T, lines []string, f func([]string) []string) error {
	t.Helper()
	out := strings.Join(f(append([]string{}, lines...)), "\n") + "\n"
	_, err := Verify(strings.NewReader(out))
	return err
}

func TestVerifyDetectsTampering(t *testing.T) {
	l := Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	for i := 0; i < 4; i++ {
		l.Append(Record{Kind: KindRefusal, Operation: "bind", Result: ResultBlocked, Reason: fmt.Sprint("r", i)})
	}
	data, _ := os.ReadFile(l.Path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if err := tamper(t, lines, func(l []string) []string { return l }); err != nil {
		t.Fatalf("untampered log fails: %v", err)
	}
	cases := map[string]func([]string) []string{
		"edit":    func(l []string) []string { l[1] = strings.Replace(l[1], `"blocked"`, `"allowed"`, 1); return l },
		"delete":  func(l []string) []string { return append(l[:1], l[2:]...) },
		"reorder": func(l []string) []string { l[1], l[2] = l[2], l[1]; return l },
		"insert":  func(l []string) []string { return append(l[:2], append([]string{l[1]}, l[2:]...)...) },
		"garbage": func(l []string) []string { return append(l, "not json") },
		"unknown": func(l []string) []string { l[0] = strings.Replace(l[0], `"v":1`, `"v":1,"x":2`, 1); return l },
	}
	for name, f := range cases {
		if err := tamper(t, lines, f); errcode.Of(err) != errcode.AuditTampered {
			t.Errorf("%s: Verify = %v, want SANDBOX_AUDIT_TAMPERED", name, err)
		}
	}
	if _, err := Verify(strings.NewReader(string(data[:len(data)-5]))); errcode.Of(err) != errcode.AuditTampered {
		t.Errorf("torn tail not detected: %v", err)
	}
}

func TestFilter(t *testing.T) {
	now := time.Now().UTC()
	old := Record{Timestamp: now.Add(-2 * time.Hour).Format(time.RFC3339Nano), Result: ResultBlocked, Connector: "a"}
	recent := Record{Timestamp: now.Format(time.RFC3339Nano), Result: ResultAllowed, Agent: "b"}
	f := Filter{Since: now.Add(-time.Hour)}
	if f.Match(old) || !f.Match(recent) {
		t.Error("since filter")
	}
	if (Filter{BlockedOnly: true}).Match(recent) || !(Filter{BlockedOnly: true}).Match(old) {
		t.Error("blocked-only filter")
	}
	if !(Filter{Connector: "b"}).Match(recent) || (Filter{Connector: "b"}).Match(old) {
		t.Error("connector filter matches agent or connector")
	}
}

// TestConcurrentProcesses appends from several processes at once (this
// test binary re-executed) and checks that the chain is intact and complete.
func TestConcurrentProcesses(t *testing.T) {
	if p := os.Getenv("SBXRUN_AUDIT_CHILD"); p != "" {
		l := Open(p)
		for i := 0; i < 50; i++ {
			if _, err := l.Append(Record{Kind: KindCompile, Operation: "spec", Result: ResultAllowed, Reason: strings.Repeat("x", 3000)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var cmds []*exec.Cmd
	for i := 0; i < 4; i++ {
		c := exec.Command(os.Args[0], "-test.run=TestConcurrentProcesses$")
		c.Env = append(os.Environ(), "SBXRUN_AUDIT_CHILD="+path)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	f, _ := os.Open(path)
	defer f.Close()
	sum, err := Verify(f)
	if err != nil || sum.Count != 200 {
		t.Fatalf("after concurrent appends: %+v, %v", sum, err)
	}
}
