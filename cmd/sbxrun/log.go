package main

import (
	"encoding/json"
	"fmt"
	"os"
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
			&cli.BoolFlag{Name: "verify", Usage: "verify the hash chain and print the record count and head hash"},
		},
		Action: runLog,
	}
}

func runLog(c *cli.Context) error {
	path := auditLog(c).Path
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		if c.Bool("verify") {
			fmt.Println("ok: 0 records")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening audit log: %w", err)
	}
	defer f.Close()
	if c.Bool("verify") {
		sum, err := audit.Verify(f)
		if err != nil {
			return err
		}
		fmt.Printf("ok: %d records, head %s\n", sum.Count, sum.Head)
		return nil
	}
	recs, err := audit.ReadAll(f)
	if err != nil {
		return err
	}
	if d := c.Duration("since"); d < 0 {
		return errcode.Errorf(errcode.ConfigInvalid, "--since must be positive")
	}
	filter := audit.Filter{BlockedOnly: c.Bool("blocked-only"), Connector: c.String("connector")}
	if d := c.Duration("since"); d > 0 {
		filter.Since = time.Now().Add(-d)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, r := range recs {
		if !filter.Match(r) {
			continue
		}
		if c.Bool("json") {
			if err := enc.Encode(r); err != nil {
				return err
			}
		} else {
			fmt.Println(r)
		}
	}
	return nil
}
