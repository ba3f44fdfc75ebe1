package seatbelt

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
)

// maxViolations bounds what a Monitor keeps: a runaway process can
// produce denials without end.
const maxViolations = 1000

// Monitor collects the violations of one run from a log stream process.
type Monitor struct {
	cmd     *exec.Cmd
	done    chan struct{}
	mu      sync.Mutex
	recs    []Violation
	dropped int
	err     error
}

// startMonitor runs argv and scans its output for violations selected by
// f. StartMonitor (darwin) passes `log stream`; tests pass a fake.
func startMonitor(ctx context.Context, argv []string, f Filter) (*Monitor, error) {
	if f.Tag == "" && len(f.PIDs) == 0 {
		return nil, fmt.Errorf("seatbelt: a violation filter needs a tag or pids")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("seatbelt: %s: %w", argv[0], err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("seatbelt: starting %s: %w", argv[0], err)
	}
	m := &Monitor{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		err := ScanViolations(out, f, m.add)
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
	}()
	return m, nil
}

func (m *Monitor) add(v Violation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.recs) >= maxViolations {
		m.dropped++
		return
	}
	m.recs = append(m.recs, v)
}

// Stop ends the log stream and returns the violations seen, oldest first,
// and how many were dropped beyond the cap. The log delivers denials a
// little after they happen: wait a moment after the command exits before
// stopping.
func (m *Monitor) Stop() ([]Violation, int, error) {
	_ = m.cmd.Process.Kill()
	<-m.done
	_ = m.cmd.Wait() // killed on purpose; its exit status says nothing
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs, m.dropped, m.err
}
