package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/seatbelt"
)

func seatbeltCommand() *cli.Command {
	return &cli.Command{
		Name:      "seatbelt",
		Usage:     "compile a tier into a macOS seatbelt (SBPL) profile and sandbox-exec argv; works on any OS",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     append(compileFlags(), seatbeltFlags()...),
		Action: func(c *cli.Context) error {
			p, _, err := seatbeltProfile(c, "seatbelt")
			if err != nil {
				return err
			}
			switch c.String("format") {
			case "sbpl":
				_, err = fmt.Fprint(stdout, p.Text)
			case "argv":
				return printJSON(p.Argv(nil))
			case "json":
				return printJSON(struct {
					Profile string           `json:"profile"`
					Params  []seatbelt.Param `json:"params"`
					Argv    []string         `json:"argv"`
				}{p.Text, p.Params, p.Argv(nil)})
			default:
				return errcode.Errorf(errcode.ConfigInvalid, "--format must be sbpl, argv or json")
			}
			return err
		},
		Subcommands: []*cli.Command{
			{
				Name:      "lint",
				Usage:     "check an SBPL profile (exit 0 only if clean)",
				ArgsUsage: "FILE|-",
				Flags:     []cli.Flag{&cli.StringSliceFlag{Name: "D", Usage: "NAME=VALUE parameter as passed to sandbox-exec (repeat)"}},
				Action:    runSeatbeltLint,
			},
			{
				Name:      "run",
				Usage:     "run a command under the profile with /usr/bin/sandbox-exec (macOS only; fails closed elsewhere)",
				ArgsUsage: "-- COMMAND ARGS...",
				Flags:     append(compileFlags(), seatbeltFlags()...),
				Action:    runSeatbeltRun,
			},
		},
	}
}

func seatbeltFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "project", Usage: "project root (granted like a declared path; required by --preset agent)"},
		&cli.StringFlag{Name: "preset", Usage: "agent or capture (empty: the tier alone)"},
		&cli.IntFlag{Name: "proxy-port", Usage: "local port of the allowlist proxy (network_access=filtered)"},
		&cli.BoolFlag{Name: "localhost", Usage: "also allow every loopback port (network_access=filtered only)"},
		&cli.StringFlag{Name: "tag", Usage: "per-run message tag (default: random)"},
		&cli.StringFlag{Name: "format", Usage: "sbpl, argv or json", Value: "sbpl"},
	}
}

func seatbeltProfile(c *cli.Context, op string) (*seatbelt.Profile, *policy.Grants, error) {
	args := c.Args().Slice()
	g, err := compileFromFlags(c, compileRequest{Operation: op, Target: "seatbelt", Args: args})
	if err != nil {
		return nil, nil, err
	}
	project := c.String("project")
	if project != "" {
		if project, err = filepath.Abs(project); err != nil {
			return nil, nil, err
		}
	}
	preset := seatbelt.Preset(c.String("preset"))
	switch preset {
	case seatbelt.PresetNone, seatbelt.PresetAgent, seatbelt.PresetCapture:
	default:
		return nil, nil, errcode.Errorf(errcode.ConfigInvalid, "--preset must be agent or capture, not %q", preset)
	}
	p, err := seatbelt.Generate(g, seatbelt.Options{ProjectRoot: project, Home: homeDir(), TmpDir: os.TempDir(),
		Preset: preset, Tag: c.String("tag"), ProxyPort: c.Int("proxy-port"), Localhost: c.Bool("localhost")})
	return p, g, err
}

func runSeatbeltLint(c *cli.Context) error {
	if c.NArg() != 1 {
		return errcode.Errorf(errcode.ConfigInvalid, "seatbelt lint takes one profile file (or -)")
	}
	var data []byte
	var err error
	if f := c.Args().First(); f == "-" {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, 4<<20))
	} else {
		data, err = os.ReadFile(f)
	}
	if err != nil {
		return errcode.Errorf(errcode.ConfigInvalid, "reading profile: %v", err)
	}
	params, err := seatbelt.ParseDefines(c.StringSlice("D"))
	if err != nil {
		return errcode.Errorf(errcode.ConfigInvalid, "%v", err)
	}
	findings := seatbelt.Lint(string(data), params)
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
	}
	if len(findings) > 0 {
		return errcode.Errorf(errcode.SpecNoncompliant, "%d finding(s) in the profile", len(findings))
	}
	fmt.Fprintln(stdout, "ok: profile is clean")
	return nil
}

func runSeatbeltRun(c *cli.Context) error {
	if c.NArg() == 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "seatbelt run needs a command after --")
	}
	p, g, err := seatbeltProfile(c, "seatbelt-run")
	if err != nil {
		return err
	}
	// The command may run in its own session: cancel on our signals so
	// Ctrl-C still stops it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// Denials are read from the macOS log by the run's tag and written to
	// the audit log; a monitor that cannot start is reported, not fatal:
	// the sandbox itself still applies.
	mon, merr := seatbelt.StartMonitor(ctx, seatbelt.Filter{Tag: p.Tag})
	if merr != nil && !errors.Is(merr, seatbelt.ErrUnsupported) {
		fmt.Fprintf(os.Stderr, "sbxrun: warning: sandbox denials will not be audited: %v\n", merr)
	}
	err = seatbelt.Run(ctx, p, c.Args().Slice(), seatbelt.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	if mon != nil {
		// The log delivers late: give the last denials time to arrive.
		time.Sleep(300 * time.Millisecond)
		vs, dropped, _ := mon.Stop()
		log := auditLog(c)
		for _, v := range vs {
			if _, aerr := log.Append(v.Record(g.Tier, p.Tag)); aerr != nil {
				return aerr
			}
		}
		if dropped > 0 {
			fmt.Fprintf(os.Stderr, "sbxrun: warning: %d sandbox denials were not recorded\n", dropped)
		}
	}
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return exitError{ee.ExitCode()}
	}
	return err
}
