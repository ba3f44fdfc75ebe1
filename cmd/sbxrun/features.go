package main

import (
	"github.com/urfave/cli/v2"
)

func featuresCommand() *cli.Command {
	return &cli.Command{
		Name:  "features",
		Usage: "print the OCI features JSON: what this build and host support",
		Action: func(c *cli.Context) error {
			return printJSON(eng(c).Features(version))
		},
	}
}
