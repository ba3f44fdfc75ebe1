package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
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

// The agent sandbox audit format's example records are records of this log:
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

// forgeryLog writes a log through Append whose records carry characters
// json.Marshal escapes (<, >, &, ", \, U+2028), non-ASCII text and Details
// lists, and returns the records Append stored and the file's lines.
func forgeryLog(t *testing.T) (*Log, []Record, []string) {
	t.Helper()
	l := Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	in := []Record{
		{Kind: KindSelection, Operation: "bind", Connector: "gh", Tier: "strict", Result: ResultAllowed,
			Details: []string{"a<b && c>d", `quote " and backslash \`, "tab\tend"}},
		{Kind: KindRefusal, Operation: "read", Agent: "code-architect", Target: "./.env", Result: ResultBlocked,
			Policy: "sensitive-file-pattern", Reason: "secret matched **/.env*", Code: "SANDBOX_POLICY_CONFLICT"},
		{Kind: KindCompile, Operation: "spec", Target: "/tmp/日本/café", Result: ResultAllowed,
			Reason: "line\u2028separator, emoji \U0001F512", Details: []string{"<script>", "&amp;"}},
		{Kind: KindOverride, Operation: "override-create", Result: ResultError, Reason: "plain"},
	}
	var stored []Record
	for _, r := range in {
		s, err := l.Append(r)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, s)
	}
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	return l, stored, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestVerifyExactBytes forges lines that decode to the very record that was
// written, so the record's hash still matches, but whose bytes say
// something else to grep or to a reader that is not encoding/json. Each
// must fail Verify and ReadAll with SANDBOX_AUDIT_TAMPERED naming the line;
// the untouched log, whose records need escaping, must pass both.
func TestVerifyExactBytes(t *testing.T) {
	_, stored, lines := forgeryLog(t)
	raw := strings.Join(lines, "\n") + "\n"
	for _, want := range []string{`\u003c`, `\u003e`, `\u0026`, `\"`, `\\`, `\u2028`, "日本", "\U0001F512"} {
		if !strings.Contains(raw, want) {
			t.Fatalf("log lacks %q; the paired case would not cover escaping", want)
		}
	}
	sum, err := Verify(strings.NewReader(raw))
	if err != nil || sum.Count != uint64(len(stored)) || sum.Head != stored[len(stored)-1].Hash {
		t.Fatalf("untouched log: Verify = %+v, %v", sum, err)
	}
	recs, err := ReadAll(strings.NewReader(raw))
	if err != nil || !reflect.DeepEqual(recs, stored) {
		t.Fatalf("untouched log: ReadAll = %+v, %v; want %+v", recs, err, stored)
	}

	reordered := func(s string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(m) // map keys come out sorted, not in struct order
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	replace := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("forgery needs %q in %s", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	cases := []struct {
		name string
		line int // 1-based line forged, and the line the error must name
		f    func(string) string
		// sameRecord: the forged line still decodes, with encoding/json,
		// to the record Append wrote, so its hash still matches and only
		// the byte check can catch it.
		sameRecord bool
		msg        string
	}{
		{"duplicate key", 2, func(s string) string { return replace(s, `{`, `{"result":"allowed",`) }, true, `duplicate key "result"`},
		{"space after colon", 2, func(s string) string { return replace(s, `"result":`, `"result": `) }, true, "canonical"},
		{"space before newline", 2, func(s string) string { return s + " " }, true, "canonical"},
		{"reordered keys", 2, reordered, true, "canonical"},
		{`\u0073 escape`, 2, func(s string) string { return replace(s, `"secret`, `"\u0073ecret`) }, true, "canonical"},
		{`\/ escape`, 2, func(s string) string { return replace(s, `"./.env"`, `".\/.env"`) }, true, "canonical"},
		{"case-folded key", 2, func(s string) string { return replace(s, `"result":`, `"Result":`) }, true, "canonical"},
		{"unescaped <", 1, func(s string) string { return replace(s, `\u003c`, `<`) }, true, "canonical"},
		{"blank line before", 2, func(s string) string { return "\n" + s }, false, "not a valid record"},
		{"trailing CR", 3, func(s string) string { return s + "\r" }, true, "canonical"},
		{"BOM at start", 1, func(s string) string { return "\uFEFF" + s }, false, "not a valid record"},
		{"extra unknown key", 4, func(s string) string { return replace(s, `"v":1`, `"v":1,"approved_by":"admin"`) }, true, "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forged := append([]string{}, lines...)
			forged[c.line-1] = c.f(forged[c.line-1])
			if forged[c.line-1] == lines[c.line-1] {
				t.Fatal("forgery changed nothing")
			}
			if c.sameRecord {
				var got Record
				if err := json.Unmarshal([]byte(forged[c.line-1]), &got); err != nil || !reflect.DeepEqual(got, stored[c.line-1]) {
					t.Fatalf("forged line should decode to the stored record: %+v, %v", got, err)
				}
				if h, _ := hashOf(got); h != got.Hash {
					t.Fatal("forged line's hash should still match its decoded record")
				}
			}
			out := strings.Join(forged, "\n") + "\n"
			prefix := fmt.Sprintf("line %d: ", c.line)
			_, err := Verify(strings.NewReader(out))
			if errcode.Of(err) != errcode.AuditTampered || !strings.Contains(err.Error(), prefix) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Verify = %v; want SANDBOX_AUDIT_TAMPERED naming %q and %q", err, prefix, c.msg)
			}
			_, err = ReadAll(strings.NewReader(out))
			if errcode.Of(err) != errcode.AuditTampered || !strings.Contains(err.Error(), prefix) {
				t.Errorf("ReadAll = %v; want SANDBOX_AUDIT_TAMPERED naming %q", err, prefix)
			}
		})
	}
}

// A duplicated key is caught by the canonical comparison on its own, not
// only by the explicit duplicate check: the canonical form names each key
// once, so re-encoding what encoding/json kept never reproduces the line.
func TestDuplicateKeyNotCanonical(t *testing.T) {
	_, stored, lines := forgeryLog(t)
	forged := strings.Replace(lines[1], `{`, `{"result":"allowed",`, 1)
	var rec Record
	if err := json.Unmarshal([]byte(forged), &rec); err != nil || rec.Result != ResultBlocked || !reflect.DeepEqual(rec, stored[1]) {
		t.Fatalf("encoding/json should keep the last value: %+v, %v", rec, err)
	}
	canon, err := encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if string(canon) == forged || string(canon) != lines[1] {
		t.Fatalf("canonical encoding %s should equal the original line, not the forgery", canon)
	}
}

// Append chains onto the last line, so a forged last line must stop it:
// the log is left byte-for-byte as found and the error is
// SANDBOX_AUDIT_TAMPERED. With the original line restored, Append extends
// the log and the result verifies.
func TestAppendRefusesForgedLastLine(t *testing.T) {
	l, stored, lines := forgeryLog(t)
	last := lines[len(lines)-1]
	forgeries := map[string]string{
		"duplicate key":        strings.Replace(last, `{`, `{"result":"allowed",`, 1),
		"space after colon":    strings.Replace(last, `"result":`, `"result": `, 1),
		"space before newline": last + " ",
		"trailing CR":          last + "\r",
		"edited value":         strings.Replace(last, `"error"`, `"allowed"`, 1),
		"unknown key":          strings.Replace(last, `"v":1`, `"v":1,"x":2`, 1),
		"old version":          strings.Replace(last, `"v":1`, `"v":0`, 1),
	}
	rec := Record{Kind: KindSelection, Operation: "bind", Result: ResultAllowed}
	for name, forgedLast := range forgeries {
		if forgedLast == last {
			t.Fatalf("%s: forgery changed nothing", name)
		}
		forged := append(append([]string{}, lines[:len(lines)-1]...), forgedLast)
		content := []byte(strings.Join(forged, "\n") + "\n")
		if err := os.WriteFile(l.Path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := l.Append(rec)
		if errcode.Of(err) != errcode.AuditTampered || !strings.Contains(err.Error(), "last record") {
			t.Errorf("%s: Append = %v, want SANDBOX_AUDIT_TAMPERED about the last record", name, err)
		}
		if got, _ := os.ReadFile(l.Path); !bytes.Equal(got, content) {
			t.Errorf("%s: Append changed the forged log", name)
		}
	}

	if err := os.WriteFile(l.Path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := l.Append(rec)
	if err != nil || s.Seq != uint64(len(stored)+1) || s.Prev != stored[len(stored)-1].Hash {
		t.Fatalf("Append onto the untouched log = %+v, %v", s, err)
	}
	f, err := os.Open(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if sum, err := Verify(f); err != nil || sum.Count != uint64(len(stored)+1) || sum.Head != s.Hash {
		t.Fatalf("after Append: Verify = %+v, %v", sum, err)
	}
}

// TestVerifyChecksSequence: a last record renumbered and rehashed keeps a
// valid chain (nothing follows it), so only the sequence check catches it.
func TestVerifyChecksSequence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := Open(path)
	for i := 0; i < 2; i++ {
		if _, err := l.Append(Record{Operation: "op", Result: ResultAllowed}); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var last Record
	if err := json.Unmarshal([]byte(lines[1]), &last); err != nil {
		t.Fatal(err)
	}
	last.Seq = 7
	h, err := hashOf(last)
	if err != nil {
		t.Fatal(err)
	}
	last.Hash = h
	b, _ := encode(last)
	os.WriteFile(path, []byte(lines[0]+"\n"+string(b)+"\n"), 0o600)
	if _, err := l.Verify(); errcode.Of(err) != errcode.AuditTampered || !strings.Contains(err.Error(), "sequence") {
		t.Errorf("renumbered last record: %v", err)
	}
}
