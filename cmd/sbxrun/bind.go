package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

func bindCommand() *cli.Command {
	return &cli.Command{
		Name:  "bind",
		Usage: "bind a connector (agent/process id) to a tier; loosening needs an override token",
		Description: "Moving a connector to a more restrictive tier always succeeds. Moving it to a less\n" +
			"restrictive one fails with SANDBOX_DOWNGRADE_BLOCKED unless --override-token carries a\n" +
			"valid token from `sbxrun override create`. Every outcome is audited. Without --tier,\n" +
			"prints the bindings.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "connector", Usage: "connector id"},
			&cli.StringFlag{Name: "tier", Usage: "tier to bind to"},
			&cli.StringFlag{Name: "override-token", Usage: "override token authorizing a loosening", EnvVars: []string{"SBXRUN_OVERRIDE_TOKEN"}},
		},
		Action: func(c *cli.Context) error {
			connector, tier := c.String("connector"), c.String("tier")
			if tier == "" {
				bs, err := eng(c).ListBindings(connector)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "CONNECTOR\tTIER\tLEVEL\tUPDATED")
				for _, b := range bs {
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", b.Connector, b.Tier, b.Level, b.Updated)
				}
				return w.Flush()
			}
			if err := eng(c).Bind(connector, tier, c.String("override-token")); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s bound to %s\n", connector, tier)
			return nil
		},
	}
}
