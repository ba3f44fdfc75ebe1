package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
)

func specCommand() *cli.Command {
	return &cli.Command{
		Name:      "spec",
		Usage:     "write an OCI config.json compiled from a tier (like `runc spec`)",
		ArgsUsage: "[-- COMMAND ARGS...]",
		Description: "Compiles the tier (narrowed by --config) into a complete OCI runtime spec and writes\n" +
			"it to BUNDLE/config.json, or prints one piece of it with --format. The process\n" +
			"arguments come from --args, the words after --, or the config (default: sh).\n" +
			"The output must be a new or regular file; it is replaced atomically.",
		Flags: append(append(selectFlags(), hostFlags()...),
			&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "bundle directory to write config.json into", Value: "."},
			&cli.StringSliceFlag{Name: "args", Usage: "process argument (repeat for each)"},
			&cli.StringFlag{Name: "format", Usage: "oci (full spec), seccomp (docker/podman seccomp profile) or grants (the policy IR)", Value: engine.FormatOCI},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output file, '-' for stdout (default: BUNDLE/config.json for oci, stdout otherwise)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing config.json"},
		),
		Action: func(c *cli.Context) error {
			out, err := engine.OutputPath(c.String("output"), c.String("bundle"), c.String("format"), c.Bool("force"))
			if err != nil {
				return err
			}
			req, err := request(c, "spec", out, append(c.StringSlice("args"), c.Args().Slice()...))
			if err != nil {
				return err
			}
			data, _, err := eng(c).Render(req, c.String("format"))
			if err != nil {
				return err
			}
			return engine.WriteOutput(out, data, stdout)
		},
	}
}
