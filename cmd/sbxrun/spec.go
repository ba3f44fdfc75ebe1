package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/specgen"
)

func specCommand() *cli.Command {
	return &cli.Command{
		Name:      "spec",
		Usage:     "write an OCI config.json compiled from a tier (like `runc spec`)",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Compiles the tier (narrowed by --config) into a complete OCI runtime spec and writes\n" +
			"it to BUNDLE/config.json, or prints one piece of it with --format. The process\n" +
			"arguments come from --args, the words after --, or the config (default: sh).",
		Flags: append(compileFlags(),
			&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "bundle directory to write config.json into", Value: "."},
			&cli.StringSliceFlag{Name: "args", Usage: "process argument (repeat for each)"},
			&cli.StringFlag{Name: "format", Usage: "oci (full spec), seccomp (docker/podman seccomp profile) or grants (the policy IR)", Value: "oci"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output file, '-' for stdout (default: BUNDLE/config.json for oci, stdout otherwise)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing config.json"},
		),
		Action: runSpec,
	}
}

func runSpec(c *cli.Context) error {
	format := c.String("format")
	if format != "oci" && format != "seccomp" && format != "grants" {
		return errcode.Errorf(errcode.ConfigInvalid, "--format must be oci, seccomp or grants, not %q", format)
	}
	out := c.String("output")
	if out == "" {
		out = "-"
		if format == "oci" {
			out = filepath.Join(c.String("bundle"), "config.json")
		}
	}
	if out != "-" && !c.Bool("force") {
		if _, err := os.Lstat(out); err == nil {
			return errcode.Errorf(errcode.ConfigInvalid, "%s exists; remove it or pass --force", out)
		}
	}
	args := append(c.StringSlice("args"), c.Args().Slice()...)
	g, err := compileFromFlags(c, compileRequest{Operation: "spec", Target: out, Args: args})
	if err != nil {
		return err
	}
	var v any = g
	switch format {
	case "oci":
		if v, err = specgen.Generate(g, specgen.Options{}); err != nil {
			return err
		}
	case "seccomp":
		if v, err = specgen.Seccomp(g); err != nil {
			return err
		}
	}
	data, err := specgen.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", format, err)
	}
	for _, u := range g.Unenforced {
		fmt.Fprintf(os.Stderr, "sbxrun: warning: not enforced by this spec alone: %s\n", u)
	}
	if out == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
