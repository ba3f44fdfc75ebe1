package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/audit"
)

func overrideCommand() *cli.Command {
	return &cli.Command{
		Name:  "override",
		Usage: "manage override tokens that authorize downgrades and widenings",
		Subcommands: []*cli.Command{{
			Name:  "create",
			Usage: "create a token (printed once; only its hash is stored in --config-dir)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "label", Usage: "who or what the override is for (recorded in the audit log)", Required: true},
				&cli.DurationFlag{Name: "ttl", Usage: "how long the token is valid", Value: 3600_000_000_000},
				&cli.IntFlag{Name: "uses", Usage: "how many times it may be used", Value: 1},
			},
			Action: func(c *cli.Context) error {
				token, err := overrideStore(c).Create(c.String("label"), c.Duration("ttl"), c.Int("uses"))
				if err != nil {
					return err
				}
				if _, err := auditLog(c).Append(audit.Record{Kind: audit.KindOverride, Operation: "override-create",
					Result: audit.ResultAllowed, Policy: "override", Reason: c.String("label"),
					Details: []string{fmt.Sprintf("ttl=%s uses=%d", c.Duration("ttl"), c.Int("uses"))}}); err != nil {
					return err
				}
				fmt.Println(token)
				return nil
			},
		}},
	}
}
