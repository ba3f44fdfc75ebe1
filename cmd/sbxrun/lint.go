package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
	"github.com/sbxrun/sbxrun/errcode"
)

func lintCommand() *cli.Command {
	return &cli.Command{
		Name:      "lint",
		Usage:     "check an OCI config.json against a tier; exit 0 only if it complies",
		ArgsUsage: "CONFIG.JSON|-",
		Description: "Prints every violation with its code and JSON path. The tier comes from --tier,\n" +
			"else from the spec's dev.sbx.tier annotation, else from the config. Exit status 5\n" +
			"(SANDBOX_SPEC_NONCOMPLIANT) when anything violates the tier: use it as a CI gate.\n" +
			"Unknown spec fields are errors here (the runtime ignores them, as OCI requires).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "tier", Usage: "tier to check against (default: the spec's dev.sbx.tier annotation)"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier, as used to generate the spec"},
			&cli.StringFlag{Name: "format", Usage: "text or json", Value: "text"},
		}, hostFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errcode.Errorf(errcode.ConfigInvalid, "lint takes one spec file (or - for stdin)")
			}
			format := c.String("format")
			if format != "text" && format != "json" {
				return errcode.Errorf(errcode.ConfigInvalid, "--format must be text or json")
			}
			s, err := engine.ReadSpec(c.Args().First())
			if err != nil {
				return err
			}
			cfg, err := engine.ReadConfig(c.String("config"))
			if err != nil {
				return err
			}
			e := eng(c)
			res, err := e.Lint(s, c.String("tier"), cfg, e.Facts(engine.FactsOptions{Rootless: c.Bool("rootless"), Arch: c.String("arch"), Reference: c.Bool("reference-host")}))
			if err != nil {
				return err
			}
			if format == "json" {
				if err := printJSON(res); err != nil {
					return err
				}
			} else {
				for _, v := range res.Violations {
					fmt.Fprintln(stdout, v)
				}
			}
			if !res.Compliant {
				return errcode.Errorf(errcode.SpecNoncompliant, "%d violation(s) of tier %s", len(res.Violations), res.Tier)
			}
			if format == "text" {
				fmt.Fprintf(stdout, "ok: complies with tier %s\n", res.Tier)
			}
			return nil
		},
	}
}
