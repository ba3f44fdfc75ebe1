package seatbelt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Errors of Run. Each means the command did not run: Run never falls back
// to running it without the sandbox.
var (
	ErrUnsupported      = errors.New("seatbelt runs only on darwin")
	ErrNoSandboxExec    = errors.New("seatbelt: " + SandboxExec + " is missing or cannot run")
	ErrAlreadySandboxed = errors.New("seatbelt: this process is already sandboxed and cannot apply another profile")
	ErrProfileRejected  = errors.New("seatbelt: the profile was rejected")
	ErrNotApplied       = errors.New("seatbelt: the sandbox could not be applied")
)

// Stdio are the standard streams of the sandboxed command.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// probeProfile proves at start that sandbox-exec can apply a profile at
// all here: it fails when the tool is gone or the caller is itself
// sandboxed (nested sandboxes are refused, codex #45657).
const probeProfile = "(version 1)(allow default)"

// sandbox-exec's own exit statuses: EX_DATAERR for a profile it cannot
// read, EX_OSERR when sandbox_apply fails.
const (
	exitDataErr = 65
	exitOSErr   = 71
)

// stderrHead is how much of the command's stderr Run keeps to tell
// sandbox-exec's own failure from the command's.
const stderrHead = 512

// command builds the exec.Cmd for p without starting it. The profile is
// linted again here, so a Profile that was built by hand or altered after
// Generate never runs.
func command(ctx context.Context, p *Profile, cmd []string, stdio Stdio) (*exec.Cmd, error) {
	if p == nil || p.Text == "" {
		return nil, fmt.Errorf("%w: empty profile", ErrProfileRejected)
	}
	if findings := Lint(p.Text, p.ParamMap()); len(findings) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrProfileRejected, findings[0])
	}
	if len(cmd) == 0 {
		cmd = p.Command
	}
	if len(cmd) == 0 || cmd[0] == "" || strings.Contains(cmd[0], "=") {
		return nil, fmt.Errorf("seatbelt: program %q: empty, or env would read it as a variable", cmd)
	}
	argv := p.Argv(cmd)
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// sandbox-exec itself starts from an empty environment; env -i in the
	// argv sets the filtered one.
	c.Env = []string{}
	c.Dir = p.Dir
	c.Stdin, c.Stdout, c.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	// Without a terminal grant the command gets a session of its own and
	// no controlling terminal: it cannot push input into the caller's
	// terminal (TIOCSTI) after it exits.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: !p.Terminal}
	return c, nil
}

// makeScratch creates RUN_TMP, private to the user. It must not exist
// yet: a directory someone prepared could hold links into other places.
func makeScratch(p *Profile) (func(), error) {
	dir := p.Param(ParamRunTmp)
	if dir == "" {
		return nil, fmt.Errorf("%w: no %s", ErrProfileRejected, ParamRunTmp)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("seatbelt: creating the scratch directory: %w", err)
	}
	return func() { _ = os.RemoveAll(dir) }, nil
}

// probe runs the trivial profile with sandbox-exec.
func probe(ctx context.Context, sandboxExec, truePath string) error {
	c := exec.CommandContext(ctx, sandboxExec, "-p", probeProfile, truePath)
	c.Env = []string{}
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if e := applyError(ee.ExitCode(), stderr.String()); e != nil {
			return e
		}
		return fmt.Errorf("%w: probe exited %d: %s", ErrNotApplied, ee.ExitCode(), strings.TrimSpace(stderr.String()))
	default:
		return fmt.Errorf("%w: %v", ErrNoSandboxExec, err)
	}
}

// applyError classifies sandbox-exec's own failures; nil for other exit
// statuses.
func applyError(code int, msg string) error {
	msg = strings.TrimSpace(msg)
	switch {
	case strings.Contains(msg, "sandbox_apply") && strings.Contains(msg, "Operation not permitted"):
		return fmt.Errorf("%w: %s", ErrAlreadySandboxed, msg)
	case code == exitDataErr:
		return fmt.Errorf("%w: %s", ErrProfileRejected, msg)
	case code == exitOSErr:
		return fmt.Errorf("%w: %s", ErrNotApplied, msg)
	}
	return nil
}

// runError tells sandbox-exec's failure (exit 65 or 71 with its own
// message first on stderr) from the command's own exit status, which is
// returned unchanged.
func runError(err error, head []byte) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && bytes.HasPrefix(head, []byte("sandbox-exec:")) {
		if e := applyError(ee.ExitCode(), string(head)); e != nil {
			return e
		}
	}
	return err
}

// headWriter passes writes on and keeps the first stderrHead bytes.
type headWriter struct {
	w    io.Writer
	head []byte
}

func (h *headWriter) Write(p []byte) (int, error) {
	if n := stderrHead - len(h.head); n > 0 {
		h.head = append(h.head, p[:min(n, len(p))]...)
	}
	if h.w == nil {
		return len(p), nil
	}
	return h.w.Write(p)
}
