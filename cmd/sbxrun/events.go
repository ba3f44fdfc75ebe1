package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
	"github.com/sbxrun/sbxrun/errcode"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:      "events",
		Usage:     "print a container's resource usage as JSON (one-shot with --stats, else every --interval)",
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
			for {
				st, err := eng(c).Containers().Stats(id)
				if err != nil {
					return err
				}
				if err := printJSON(struct {
					Type string           `json:"type"`
					ID   string           `json:"id"`
					Data *container.Stats `json:"data"`
				}{"stats", id, st}); err != nil {
					return err
				}
				if c.Bool("stats") {
					return nil
				}
				time.Sleep(c.Duration("interval"))
			}
		},
	}
}
