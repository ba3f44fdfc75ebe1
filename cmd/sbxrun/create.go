package main

import "github.com/urfave/cli/v2"

func createCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a container from a bundle, enforcing its tier; start it with `start`",
		ArgsUsage: "CONTAINER-ID",
		Flags:     createFlags(),
		Action: func(c *cli.Context) error {
			o, err := prepareCreate(c, "create")
			if err != nil {
				return err
			}
			return runtimeOf(c).Create(o)
		},
	}
}
