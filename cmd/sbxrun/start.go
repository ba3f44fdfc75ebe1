package main

import "github.com/urfave/cli/v2"

func startCommand() *cli.Command {
	return &cli.Command{
		Name:      "start",
		Usage:     "start the process of a created container",
		ArgsUsage: "CONTAINER-ID",
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			return eng(c).Containers().Start(id)
		},
	}
}
