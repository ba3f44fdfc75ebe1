package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/audit"
	"github.com/sbxrun/sbxrun/errcode"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "show or verify the audit log",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "blocked-only", Usage: "only records whose result is blocked"},
			&cli.StringFlag{Name: "connector", Usage: "only records of this connector or agent"},
			&cli.DurationFlag{Name: "since", Usage: "only records newer than this (e.g. 1h)"},
			&cli.BoolFlag{Name: "json", Usage: "print records as JSON Lines"},
			&cli.BoolFlag{Name: "verify", Usage: "verify the exact bytes and hash chain; print the record count and head hash"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("verify") {
				sum, err := eng(c).VerifyLog()
				if err != nil {
					return err
				}
				if sum.Count == 0 {
					fmt.Fprintln(stdout, "ok: 0 records")
					return nil
				}
				fmt.Fprintf(stdout, "ok: %d records, head %s\n", sum.Count, sum.Head)
				return nil
			}
			if c.Duration("since") < 0 {
				return errcode.Errorf(errcode.ConfigInvalid, "--since must be positive")
			}
			recs, err := eng(c).ReadLog()
			if err != nil {
				return err
			}
			filter := audit.Filter{BlockedOnly: c.Bool("blocked-only"), Connector: c.String("connector")}
			if d := c.Duration("since"); d > 0 {
				filter.Since = time.Now().Add(-d)
			}
			enc := json.NewEncoder(stdout)
			for _, r := range recs {
				if !filter.Match(r) {
					continue
				}
				if c.Bool("json") {
					if err := enc.Encode(r); err != nil {
						return err
					}
				} else {
					fmt.Fprintln(stdout, r)
				}
			}
			return nil
		},
	}
}
