package seatbelt

import (
	"context"
)

// logBin and the predicate select the kernel's sandbox denials and the
// sandbox reporting subsystem; the Filter then keeps one run's. log
// refuses to run sandboxed, so the monitor runs in the parent.
const (
	logBin       = "/usr/bin/log"
	logPredicate = `((processID == 0) AND (senderImagePath CONTAINS "/Sandbox")) OR (subsystem == "com.apple.sandbox.reporting")`
	trueBin      = "/usr/bin/true"
)

// Run runs cmd (p.Command when empty) under the profile with
// /usr/bin/sandbox-exec and returns the command's error, or an Err* error
// when the sandbox cannot be applied: it probes sandbox-exec first, creates
// the per-run scratch directory (removed afterwards), and never runs the
// command unsandboxed.
func Run(ctx context.Context, p *Profile, cmd []string, stdio Stdio) error {
	c, err := command(ctx, p, cmd, stdio)
	if err != nil {
		return err
	}
	if err := probe(ctx, SandboxExec, trueBin); err != nil {
		return err
	}
	cleanup, err := makeScratch(p)
	if err != nil {
		return err
	}
	defer cleanup()
	head := &headWriter{w: stdio.Stderr}
	c.Stderr = head
	return runError(c.Run(), head.head)
}

// StartMonitor starts `log stream --style ndjson` and collects the
// violations f selects until Stop.
func StartMonitor(ctx context.Context, f Filter) (*Monitor, error) {
	return startMonitor(ctx, []string{logBin, "stream", "--style", "ndjson", "--predicate", logPredicate}, f)
}
