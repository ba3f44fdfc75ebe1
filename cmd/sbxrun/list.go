package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/errcode"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list containers under --root",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "table or json", Value: "table"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only ids"},
		},
		Action: func(c *cli.Context) error {
			all, err := eng(c).Containers().List()
			if err != nil {
				return err
			}
			if all == nil {
				all = []container.State{}
			}
			switch {
			case c.Bool("quiet"):
				for _, s := range all {
					fmt.Fprintln(stdout, s.ID)
				}
				return nil
			case c.String("format") == "json":
				return printJSON(all)
			case c.String("format") != "table":
				return errcode.Errorf(errcode.ConfigInvalid, "--format must be table or json")
			}
			w := tabwriter.NewWriter(stdout, 12, 1, 3, ' ', 0)
			fmt.Fprintln(w, "ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER")
			for _, s := range all {
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", s.ID, s.Pid, s.Status, s.Bundle, s.Created.Format(time.RFC3339Nano), s.Owner)
			}
			return w.Flush()
		},
	}
}
