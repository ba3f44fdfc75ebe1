package main

import "github.com/urfave/cli/v2"

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "thaw a paused container",
		ArgsUsage: "CONTAINER-ID",
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			return eng(c).Containers().Resume(id)
		},
	}
}
