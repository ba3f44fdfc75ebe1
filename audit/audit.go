// Package audit writes and verifies sbxrun's audit log: versioned JSON
// Lines, one record per decision (tier selection, change, refusal, override,
// compile, lint), appended by any number of processes at once.
//
// Each record carries the SHA-256 of the previous record and its own hash
// over its canonical JSON, plus a sequence number, so Verify detects any
// edited, inserted, reordered or deleted record. Truncation of the tail
// leaves a valid shorter chain; to detect it, keep the head hash that
// `sbxrun log --verify` prints somewhere the sandbox cannot write.
//
// The hash covers the record's canonical encoding, not the bytes in the
// file, so every reader (Verify, ReadAll, and Append when it chains onto
// the last record) also requires each line to be byte-for-byte that
// canonical encoding. Otherwise a line could say one thing to grep or to a
// first-key-wins JSON reader and another to the hash: a duplicated key,
// added whitespace, reordered keys, a \u escape for a plain character or a
// CR before the newline would all decode to a record whose hash matches.
//
// Writers take an exclusive flock on the log for the read-last-record +
// append, and write each record with one write(2) on an O_APPEND descriptor,
// so concurrent writers never interleave or tear lines.
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
)

// Version is the record schema version.
const Version = 1

// Genesis is the prev hash of the first record.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Results.
const (
	ResultAllowed = "allowed"
	ResultBlocked = "blocked"
	ResultError   = "error"
)

// Kinds of records.
const (
	KindSelection = "selection" // a tier was chosen for a connector or run
	KindChange    = "change"    // a connector moved to another tier
	KindRefusal   = "refusal"   // a request was refused
	KindOverride  = "override"  // an override token authorized a widening
	KindCompile   = "compile"   // a policy was compiled into an artifact
	KindLifecycle = "lifecycle" // an OCI hook reported a container lifecycle stage
)

// Record is one audit event. The first seven fields are exactly those of
// the agent sandbox audit format (docs/audit.md), so its example records
// are records of this log.
type Record struct {
	Timestamp string   `json:"timestamp"`
	Agent     string   `json:"agent,omitempty"`
	Operation string   `json:"operation"`
	Target    string   `json:"target,omitempty"`
	Result    string   `json:"result"`
	Policy    string   `json:"policy,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Connector string   `json:"connector,omitempty"`
	Tier      string   `json:"tier,omitempty"`
	Code      string   `json:"code,omitempty"`
	Details   []string `json:"details,omitempty"`
	V         int      `json:"v"`
	Seq       uint64   `json:"seq"`
	Prev      string   `json:"prev"`
	Hash      string   `json:"hash"`
}

// Log is an audit log file.
type Log struct {
	Path string
	now  func() time.Time
}

// Open returns the log at path; the file and its directory are created on
// first append (directory 0700, file 0600: the log names connectors and
// paths that are nobody else's business).
func Open(path string) *Log { return &Log{Path: path, now: time.Now} }

// encode returns a record's canonical encoding: json.Marshal of the
// Record, the form Append writes (without its newline) and the only form
// readers accept. json.Marshal's HTML escaping (<, >, & as \u003c, \u003e,
// \u0026) and its escaping of U+2028 and U+2029 are part of the canonical
// form: logs already written that way keep verifying, and the writer, the
// hash and the checkers all go through this one function.
func encode(r Record) ([]byte, error) {
	return json.Marshal(r)
}

// hashOf computes a record's hash: SHA-256 over the prev hash and the
// canonical JSON of the record with Hash empty.
func hashOf(r Record) (string, error) {
	r.Hash = ""
	b, err := encode(r)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(r.Prev))
	h.Write([]byte{'\n'})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Append adds r to the log, filling in timestamp (if empty), version,
// sequence number and chain hashes. It returns the stored record.
func (l *Log) Append(r Record) (Record, error) {
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return r, fmt.Errorf("creating audit log directory: %w", err)
	}
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return r, fmt.Errorf("opening audit log: %w", err)
	}
	defer f.Close()
	unlock, err := lock(f)
	if err != nil {
		return r, fmt.Errorf("locking audit log: %w", err)
	}
	defer unlock()

	last, err := lastRecord(f)
	if err != nil {
		return r, err
	}
	if r.Timestamp == "" {
		r.Timestamp = l.now().UTC().Format(time.RFC3339Nano)
	}
	r.V = Version
	r.Prev, r.Seq = Genesis, 1
	if last != nil {
		r.Prev, r.Seq = last.Hash, last.Seq+1
	}
	if r.Hash, err = hashOf(r); err != nil {
		return r, fmt.Errorf("hashing audit record: %w", err)
	}
	line, err := encode(r)
	if err != nil {
		return r, fmt.Errorf("encoding audit record: %w", err)
	}
	line = append(line, '\n')
	// One write on an O_APPEND descriptor: the record lands whole at the end.
	if _, err := f.Write(line); err != nil {
		return r, fmt.Errorf("writing audit record: %w", err)
	}
	if err := f.Sync(); err != nil {
		return r, fmt.Errorf("syncing audit log: %w", err)
	}
	return r, nil
}

// lastRecord reads the final line of f (nil for an empty file). Append
// chains onto what it returns, so it refuses a last line that is not a
// canonical, current-version record whose hash matches its content:
// extending a forged tail would bury the forgery under genuine records.
// Earlier lines are left to Verify; reading them all on every append would
// make each append cost the size of the log.
func lastRecord(f *os.File) (*Record, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return nil, nil
	}
	const chunk = 64 << 10
	var tail []byte
	for off := size; off > 0 && bytes.Count(tail, []byte{'\n'}) < 2; {
		n := int64(chunk)
		if off < n {
			n = off
		}
		off -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading audit log: %w", err)
		}
		tail = append(buf, tail...)
	}
	if tail[len(tail)-1] != '\n' {
		return nil, errcode.Errorf(errcode.AuditTampered, "audit log %s ends in a partial record; run `sbxrun log --verify`", f.Name())
	}
	lines := bytes.Split(bytes.TrimSuffix(tail, []byte{'\n'}), []byte{'\n'})
	r, err := decodeLine(lines[len(lines)-1])
	if err == nil {
		err = checkSelf(r)
	}
	if err != nil {
		return nil, errcode.Errorf(errcode.AuditTampered, "audit log %s: last record: %v; run `sbxrun log --verify`", f.Name(), err)
	}
	return &r, nil
}

// decodeLine decodes one line (without its newline) into a Record and
// checks that the line is exactly the record's canonical encoding.
func decodeLine(line []byte) (Record, error) {
	var rec Record
	if err := checkKeys(line); err != nil {
		return rec, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("not a valid record: %v", err)
	}
	canon, err := encode(rec)
	if err != nil {
		return rec, fmt.Errorf("re-encoding record: %v", err)
	}
	if !bytes.Equal(line, canon) {
		return rec, fmt.Errorf("not in canonical form (differs from the encoding the writer produces at byte %d)", firstDiff(line, canon)+1)
	}
	return rec, nil
}

// checkKeys rejects a line whose top-level object names a key twice.
// encoding/json keeps the last value while a first-key-wins reader or grep
// sees the first, so the two would disagree on what the record says. The
// canonical comparison catches this too; checking here names the key.
// Nested objects are not walked: no Record field decodes from an object,
// so any nested object fails decoding anyway.
func checkKeys(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not a valid record: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not a valid record: not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a valid record: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("not a valid record: object key is not a string")
		}
		if seen[key] {
			return fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("not a valid record: %v", err)
		}
	}
	return nil
}

// firstDiff returns the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// checkSelf checks what one record can prove on its own: its version and
// that its hash matches its content and prev link.
func checkSelf(rec Record) error {
	if rec.V != Version {
		return fmt.Errorf("record version %d, want %d", rec.V, Version)
	}
	want, err := hashOf(rec)
	if err != nil {
		return fmt.Errorf("hashing record: %v", err)
	}
	if want != rec.Hash {
		return fmt.Errorf("record was modified (hash mismatch)")
	}
	return nil
}

// Summary describes a verified log.
type Summary struct {
	Count uint64
	Head  string
}

// ReadAll parses every record, strictly: each line must be the canonical
// encoding of a record and end in a newline, so what `sbxrun log` displays
// is exactly what Verify checks. It does not verify the chain.
func ReadAll(r io.Reader) ([]Record, error) {
	var out []Record
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return nil, errcode.Errorf(errcode.AuditTampered, "line %d: partial record (the log does not end in a newline)", n)
			}
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading audit log: %w", err)
		}
		rec, err := decodeLine(line[:len(line)-1])
		if err != nil {
			return nil, errcode.Errorf(errcode.AuditTampered, "line %d: %v", n, err)
		}
		out = append(out, rec)
	}
}

// Verify checks the whole log: every line is the canonical encoding of a
// record (see ReadAll), and every record has the current version, the next
// sequence number, the previous record's hash, and a hash that matches its
// content.
func Verify(r io.Reader) (Summary, error) {
	recs, err := ReadAll(r)
	if err != nil {
		return Summary{}, err
	}
	prev := Genesis
	for i, rec := range recs {
		line := i + 1
		switch {
		case rec.V != Version:
			return Summary{}, errcode.Errorf(errcode.AuditTampered, "line %d: record version %d, want %d", line, rec.V, Version)
		case rec.Seq != uint64(line):
			return Summary{}, errcode.Errorf(errcode.AuditTampered, "line %d: sequence %d, want %d (a record was removed or inserted)", line, rec.Seq, line)
		case rec.Prev != prev:
			return Summary{}, errcode.Errorf(errcode.AuditTampered, "line %d: chain broken (prev hash does not match line %d)", line, line-1)
		}
		if err := checkSelf(rec); err != nil {
			return Summary{}, errcode.Errorf(errcode.AuditTampered, "line %d: %v", line, err)
		}
		prev = rec.Hash
	}
	return Summary{Count: uint64(len(recs)), Head: prev}, nil
}

// Filter selects records for display.
type Filter struct {
	BlockedOnly bool
	Connector   string
	Since       time.Time
}

// Match reports whether rec passes f.
func (f Filter) Match(rec Record) bool {
	if f.BlockedOnly && rec.Result != ResultBlocked {
		return false
	}
	if f.Connector != "" && rec.Connector != f.Connector && rec.Agent != f.Connector {
		return false
	}
	if !f.Since.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, rec.Timestamp)
		if err != nil || t.Before(f.Since) {
			return false
		}
	}
	return true
}

// DefaultPath is where the log lives unless --audit-log says otherwise:
// <state dir>/audit.jsonl.
func DefaultPath(stateDir string) string {
	return filepath.Join(stateDir, "audit.jsonl")
}

// String renders a record as one human line.
func (r Record) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-8s %-9s", r.Timestamp, r.Result, r.Kind)
	for _, kv := range [][2]string{{"connector", r.Connector}, {"agent", r.Agent}, {"tier", r.Tier}, {"op", r.Operation}, {"target", r.Target}, {"policy", r.Policy}, {"code", r.Code}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, " reason=%q", r.Reason)
	}
	return b.String()
}

// open opens the log for reading; a log that does not exist yet is empty.
func (l *Log) open() (io.ReadCloser, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", err)
	}
	return f, nil
}

// ReadAll reads every record of the log (see ReadAll).
func (l *Log) ReadAll() ([]Record, error) {
	f, err := l.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f)
}

// Verify verifies the whole log (see Verify).
func (l *Log) Verify() (Summary, error) {
	f, err := l.open()
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	return Verify(f)
}
