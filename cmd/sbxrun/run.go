package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "create and start a container; its exit status is run's (128+N if killed by signal N)",
		ArgsUsage: "CONTAINER-ID",
		Flags:     append(createFlags(), &cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the container runs"}),
		Action: func(c *cli.Context) error {
			req, err := createRequest(c)
			if err != nil {
				return err
			}
			return exitStatus(eng(c).Run(req, c.Bool("detach"), container.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
		},
	}
}
