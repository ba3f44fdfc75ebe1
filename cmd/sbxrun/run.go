package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/container"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "create and start a container; its exit status is run's",
		ArgsUsage: "CONTAINER-ID",
		Flags:     append(createFlags(), &cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "return once the container runs"}),
		Action: func(c *cli.Context) error {
			o, err := prepareCreate(c, "run")
			if err != nil {
				return err
			}
			status, err := runtimeOf(c).Run(o, c.Bool("detach"), container.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
			if err != nil {
				return err
			}
			if status != 0 {
				return exitError{status}
			}
			return nil
		},
	}
}
