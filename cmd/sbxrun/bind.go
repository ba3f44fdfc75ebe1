package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/authz"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
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
		Action: runBind,
	}
}

func runBind(c *cli.Context) error {
	connector, tier := c.String("connector"), c.String("tier")
	store := authz.OpenBindings(c.String("state-dir"))
	if tier == "" {
		ids, all, err := store.List()
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "CONNECTOR\tTIER\tLEVEL\tUPDATED")
		for _, id := range ids {
			if connector == "" || connector == id {
				b := all[id]
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", id, b.Tier, b.Level, b.Updated)
			}
		}
		return w.Flush()
	}
	if connector == "" {
		return errcode.Errorf(errcode.ConfigInvalid, "bind needs --connector")
	}
	token := c.String("override-token")
	authorize := func() (*policy.Authorization, error) {
		if token == "" {
			return nil, nil
		}
		return overrideStore(c).Use(token)
	}
	if err := bindAndAudit(c, connector, tier, authorize); err != nil {
		return err
	}
	fmt.Printf("%s bound to %s\n", connector, tier)
	return nil
}
