package seatbelt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sbxrun/sbxrun/audit"
)

// Violation is one sandbox denial read from the macOS log.
type Violation struct {
	Time      time.Time `json:"time"`
	PID       int       `json:"pid"`
	Process   string    `json:"process"`
	Operation string    `json:"operation"`
	Target    string    `json:"target,omitempty"`
}

// Filter selects the violations of one run: those carrying its message tag
// (every deny of a generated profile has one) or coming from one of its
// processes. An empty filter selects nothing, so an unrelated process's
// denials never reach a run's audit records.
type Filter struct {
	Tag  string
	PIDs map[int]bool
}

// denyMessage is the first line of a sandbox denial's eventMessage, e.g.
// "Sandbox: cat(4242) deny(1) file-read-data /Users/x/.ssh/id_rsa". The
// process name may itself hold spaces and parentheses, so the pid is the
// last "(digits) deny(" on the line.
var denyMessage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Sandbox: (.+)\(([0-9]+)\) deny\([0-9]+\) (\S+)(?: (.*))?$`)
})

// logEvent is the part of a `log stream --style ndjson` record we read.
type logEvent struct {
	Timestamp    string `json:"timestamp"`
	EventMessage string `json:"eventMessage"`
}

// logTime is the timestamp layout of log's ndjson style; fractional
// seconds are accepted after the seconds field when parsing.
const logTime = "2006-01-02 15:04:05-0700"

// maxLogLine bounds one ndjson record (backtraces make them long).
const maxLogLine = 1 << 20

// Parse reads one line of `log stream --style ndjson` output. ok is false
// for lines that are not JSON (log prints a header line first), not a
// sandbox denial, or not selected by f.
func (f Filter) Parse(line []byte) (v Violation, ok bool) {
	var ev logEvent
	if json.Unmarshal(line, &ev) != nil {
		return Violation{}, false
	}
	first, rest, _ := strings.Cut(ev.EventMessage, "\n")
	m := denyMessage().FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return Violation{}, false
	}
	pid, err := strconv.Atoi(m[2])
	if err != nil || !f.selects(pid, rest) {
		return Violation{}, false
	}
	t, _ := time.Parse(logTime, ev.Timestamp)
	return Violation{Time: t, PID: pid, Process: m[1], Operation: m[3], Target: m[4]}, true
}

// selects looks for the tag only after the first line: the first line
// holds the denied path, which the sandboxed process chooses.
func (f Filter) selects(pid int, rest string) bool {
	return f.PIDs[pid] || f.Tag != "" && strings.Contains(rest, f.Tag)
}

// ScanViolations parses log output line by line and calls emit for each
// selected violation, until r ends.
func ScanViolations(r io.Reader, f Filter, emit func(Violation)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLogLine)
	for sc.Scan() {
		if v, ok := f.Parse(sc.Bytes()); ok {
			emit(v)
		}
	}
	return sc.Err()
}

// Record turns a denial into an audit record of the run that caused it.
func (v Violation) Record(tier, tag string) audit.Record {
	return audit.Record{
		Timestamp: v.Time.UTC().Format(time.RFC3339Nano),
		Agent:     v.Process,
		Kind:      audit.KindRefusal,
		Operation: v.Operation,
		Target:    v.Target,
		Result:    audit.ResultBlocked,
		Policy:    "seatbelt",
		Tier:      tier,
		Reason:    fmt.Sprintf("sandbox denial (pid %d, run %s)", v.PID, tag),
	}
}
