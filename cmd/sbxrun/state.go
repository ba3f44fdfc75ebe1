package main

import (
	"github.com/urfave/cli/v2"
)

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:      "state",
		Usage:     "print a container's state as JSON",
		ArgsUsage: "CONTAINER-ID",
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			st, err := eng(c).Containers().State(id)
			if err != nil {
				return err
			}
			return printJSON(st)
		},
	}
}
