package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
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
				&cli.DurationFlag{Name: "ttl", Usage: "how long the token is valid", Value: time.Hour},
				&cli.IntFlag{Name: "uses", Usage: "how many times it may be used", Value: 1},
			},
			Action: func(c *cli.Context) error {
				token, err := eng(c).CreateOverride(c.String("label"), c.Duration("ttl"), c.Int("uses"))
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, token)
				return nil
			},
		}},
	}
}
