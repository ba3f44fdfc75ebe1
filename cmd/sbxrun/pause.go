package main

import "github.com/urfave/cli/v2"

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:      "pause",
		Usage:     "freeze every process of a container",
		ArgsUsage: "CONTAINER-ID",
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			return eng(c).Containers().Pause(id)
		},
	}
}
