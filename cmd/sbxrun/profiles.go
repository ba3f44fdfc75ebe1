package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/profiles"
)

func profilesCommand() *cli.Command {
	return &cli.Command{
		Name:  "profiles",
		Usage: "list the sandbox tiers and their capability grants",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the tier data as JSON"}},
		Action: func(c *cli.Context) error {
			cat := eng(c).Catalog()
			if c.Bool("json") {
				return printJSON(cat.Tiers)
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprint(w, "TIER\tLEVEL")
			for _, capName := range profiles.Capabilities {
				fmt.Fprintf(w, "\t%s", capName)
			}
			fmt.Fprintln(w)
			for _, t := range cat.Tiers {
				fmt.Fprintf(w, "%s\t%d", t.Name, t.Level)
				for _, capName := range profiles.Capabilities {
					fmt.Fprintf(w, "\t%s", t.Access(capName))
				}
				fmt.Fprintln(w)
			}
			return w.Flush()
		},
	}
}
