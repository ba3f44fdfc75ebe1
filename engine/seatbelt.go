package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/seatbelt"
)

// SeatbeltRequest is a tier to compile into a macOS seatbelt profile.
type SeatbeltRequest struct {
	Request
	// Project is granted like a declared path (required by the agent preset).
	Project string
	Preset  seatbelt.Preset
	// ProxyPort is the local port of the allowlist proxy (filtered network).
	ProxyPort int
	// Localhost also allows every loopback port (filtered network only).
	Localhost bool
	// Tag marks this run's denials in the macOS log (default: random).
	Tag string
}

// Seatbelt compiles req into an SBPL profile. The compile is audited.
func (e *Engine) Seatbelt(req SeatbeltRequest) (*seatbelt.Profile, *Decision, error) {
	switch req.Preset {
	case seatbelt.PresetNone, seatbelt.PresetAgent, seatbelt.PresetCapture:
	default:
		return nil, nil, errcode.Errorf(errcode.ConfigInvalid, "preset must be %s or %s, not %q", seatbelt.PresetAgent, seatbelt.PresetCapture, req.Preset)
	}
	project := req.Project
	if project != "" {
		var err error
		if project, err = filepath.Abs(project); err != nil {
			return nil, nil, errcode.Errorf(errcode.ConfigInvalid, "project %s: %v", req.Project, err)
		}
	}
	req.RequireTier = true
	d, err := e.Select(req.Request)
	if err != nil {
		return nil, nil, err
	}
	p, err := seatbelt.Generate(d.Grants, seatbelt.Options{ProjectRoot: project, Home: HomeDir(), TmpDir: os.TempDir(),
		Preset: req.Preset, Tag: req.Tag, ProxyPort: req.ProxyPort, Localhost: req.Localhost})
	return p, d, err
}

// SeatbeltRun runs args under the profile of req with sandbox-exec and
// writes the sandbox's denials (read from the macOS log by the run's tag)
// to the audit log. Off darwin, or where the sandbox cannot be applied, it
// refuses: the command never runs unsandboxed. It returns the command's
// exit status.
func (e *Engine) SeatbeltRun(ctx context.Context, req SeatbeltRequest, args []string, stdio seatbelt.Stdio) (int, error) {
	if len(args) == 0 {
		return -1, errcode.Errorf(errcode.ConfigInvalid, "seatbelt run needs a command")
	}
	req.Request.Operation = "seatbelt-run"
	p, d, err := e.Seatbelt(req)
	if err != nil {
		return -1, err
	}
	// A monitor that cannot start is reported, not fatal: the sandbox
	// itself still applies, only its denials go unrecorded.
	mon, merr := seatbelt.StartMonitor(ctx, seatbelt.Filter{Tag: p.Tag})
	if merr != nil && !errors.Is(merr, seatbelt.ErrUnsupported) {
		e.log.Warn("sandbox denials will not be audited", "err", merr)
	}
	err = seatbelt.Run(ctx, p, args, stdio)
	if mon != nil {
		// The log delivers late: give the last denials time to arrive.
		time.Sleep(300 * time.Millisecond)
		vs, dropped, _ := mon.Stop()
		for _, v := range vs {
			if _, aerr := e.audit.Append(v.Record(d.Grants.Tier, p.Tag)); aerr != nil {
				return -1, aerr
			}
		}
		if dropped > 0 {
			e.log.Warn("sandbox denials were not recorded", "count", dropped)
		}
	}
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, seatbeltError(err)
	}
	return 0, nil
}

// seatbeltError gives the seatbelt runner's refusals their code: each means
// the sandbox could not be applied, so the command did not run.
func seatbeltError(err error) error {
	for _, target := range []error{seatbelt.ErrUnsupported, seatbelt.ErrNoSandboxExec, seatbelt.ErrAlreadySandboxed, seatbelt.ErrNotApplied} {
		if errors.Is(err, target) {
			return errcode.Errorf(errcode.Unenforceable, "%w", err)
		}
	}
	if errors.Is(err, seatbelt.ErrProfileRejected) {
		return errcode.Errorf(errcode.SpecNoncompliant, "%w", err)
	}
	return err
}

// LintSeatbelt lints the SBPL profile in path ("-" is stdin) with the
// sandbox-exec parameters defines (NAME=VALUE).
func LintSeatbelt(path string, defines []string) ([]seatbelt.Finding, error) {
	data, err := readRegular(path, 4<<20, errcode.ConfigInvalid)
	if err != nil {
		return nil, err
	}
	params, err := seatbelt.ParseDefines(defines)
	if err != nil {
		return nil, errcode.Errorf(errcode.ConfigInvalid, "%v", err)
	}
	return seatbelt.Lint(string(data), params), nil
}
