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
// the agent-sandbox audit format (SPEC-SANDBOX-01), so its example records
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

// hashOf computes a record's hash: SHA-256 over the prev hash and the
// canonical JSON of the record with Hash empty.
func hashOf(r Record) (string, error) {
	r.Hash = ""
	b, err := json.Marshal(r)
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
	line, err := json.Marshal(r)
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

// lastRecord reads the final line of f (nil for an empty file).
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
	var r Record
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		return nil, errcode.Errorf(errcode.AuditTampered, "audit log %s: last record unreadable: %v", f.Name(), err)
	}
	return &r, nil
}

// Summary describes a verified log.
type Summary struct {
	Count uint64
	Head  string
}

// ReadAll parses every record, strictly. It does not verify the chain.
func ReadAll(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, errcode.Errorf(errcode.AuditTampered, "line %d: not a valid record: %v", n, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	return out, nil
}

// Verify checks the whole chain: every record parses, has the current
// version, the next sequence number, the previous record's hash, and a hash
// that matches its content.
func Verify(r io.Reader) (Summary, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Summary{}, fmt.Errorf("reading audit log: %w", err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return Summary{}, errcode.Errorf(errcode.AuditTampered, "the log ends in a partial record")
	}
	recs, err := ReadAll(bytes.NewReader(data))
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
		want, err := hashOf(rec)
		if err != nil {
			return Summary{}, err
		}
		if want != rec.Hash {
			return Summary{}, errcode.Errorf(errcode.AuditTampered, "line %d: record was modified (hash mismatch)", line)
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
