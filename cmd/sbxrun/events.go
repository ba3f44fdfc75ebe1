package main

import (
	"encoding/json"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/errcode"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:      "events",
		Usage:     "print a container's events as runc does: stats every --interval and OOM notifications (one stats event with --stats)",
		ArgsUsage: "CONTAINER-ID",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stats", Usage: "print one stats event and exit"},
			&cli.DurationFlag{Name: "interval", Usage: "time between stats events", Value: 5 * time.Second},
		},
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			if c.Duration("interval") <= 0 {
				return errcode.Errorf(errcode.ConfigInvalid, "--interval must be positive")
			}
			o := container.EventOptions{StatsOnly: c.Bool("stats"), Interval: c.Duration("interval")}
			// One event per line, as runc prints them.
			enc := json.NewEncoder(stdout)
			return eng(c).Containers().Events(id, o, func(ev *container.Event) error { return enc.Encode(ev) })
		},
	}
}
