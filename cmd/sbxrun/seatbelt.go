package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/seatbelt"
)

func seatbeltCommand() *cli.Command {
	return &cli.Command{
		Name:      "seatbelt",
		Usage:     "compile a tier into a macOS seatbelt (SBPL) profile and sandbox-exec argv; works on any OS",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Flags:     append(selectFlags(), seatbeltFlags(true)...),
		Action: func(c *cli.Context) error {
			req, err := seatbeltRequest(c, "seatbelt")
			if err != nil {
				return err
			}
			p, _, err := eng(c).Seatbelt(req)
			if err != nil {
				return err
			}
			switch c.String("format") {
			case "sbpl":
				_, err = fmt.Fprint(stdout, p.Text)
				return err
			case "argv":
				return printJSON(p.Argv(nil))
			default:
				return printJSON(struct {
					Profile string           `json:"profile"`
					Params  []seatbelt.Param `json:"params"`
					Argv    []string         `json:"argv"`
				}{p.Text, p.Params, p.Argv(nil)})
			}
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
				Flags:     append(selectFlags(), seatbeltFlags(false)...),
				Action: func(c *cli.Context) error {
					req, err := seatbeltRequest(c, "seatbelt-run")
					if err != nil {
						return err
					}
					// The command may run in its own session: cancel on our
					// signals so Ctrl-C still stops it.
					ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
					defer stop()
					return exitStatus(eng(c).SeatbeltRun(ctx, req, c.Args().Slice(),
						seatbelt.Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
				},
			},
		},
	}
}

// seatbeltFlags are the seatbelt verbs' own flags; the profile printer
// also has --format.
func seatbeltFlags(format bool) []cli.Flag {
	f := []cli.Flag{
		&cli.StringFlag{Name: "project", Usage: "project root (granted like a declared path; required by --preset agent)"},
		&cli.StringFlag{Name: "preset", Usage: "agent or capture (empty: the tier alone)"},
		&cli.IntFlag{Name: "proxy-port", Usage: "local port of the allowlist proxy (network_access=filtered)"},
		&cli.BoolFlag{Name: "localhost", Usage: "also allow every loopback port (network_access=filtered only)"},
		&cli.StringFlag{Name: "tag", Usage: "per-run message tag (default: random)"},
	}
	if format {
		f = append(f, &cli.StringFlag{Name: "format", Usage: "sbpl, argv or json", Value: "sbpl"})
	}
	return f
}

// seatbeltRequest builds the request; the profile is for macOS, so the
// Linux host facts only serve to validate syscall names.
func seatbeltRequest(c *cli.Context, op string) (engine.SeatbeltRequest, error) {
	if f := c.String("format"); c.IsSet("format") && f != "sbpl" && f != "argv" && f != "json" {
		return engine.SeatbeltRequest{}, errcode.Errorf(errcode.ConfigInvalid, "--format must be sbpl, argv or json")
	}
	req, err := request(c, op, "seatbelt", c.Args().Slice())
	if err != nil {
		return engine.SeatbeltRequest{}, err
	}
	return engine.SeatbeltRequest{Request: req, Project: c.String("project"), Preset: seatbelt.Preset(c.String("preset")),
		ProxyPort: c.Int("proxy-port"), Localhost: c.Bool("localhost"), Tag: c.String("tag")}, nil
}

func runSeatbeltLint(c *cli.Context) error {
	if c.NArg() != 1 {
		return errcode.Errorf(errcode.ConfigInvalid, "seatbelt lint takes one profile file (or -)")
	}
	findings, err := engine.LintSeatbelt(c.Args().First(), c.StringSlice("D"))
	if err != nil {
		return err
	}
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
	}
	if len(findings) > 0 {
		return errcode.Errorf(errcode.SpecNoncompliant, "%d finding(s) in the profile", len(findings))
	}
	fmt.Fprintln(stdout, "ok: profile is clean")
	return nil
}
