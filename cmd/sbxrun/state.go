package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/specgen"
)

func stateCommand() *cli.Command {
	return &cli.Command{
		Name:      "state",
		Usage:     "print a container's state as JSON",
		ArgsUsage: "CONTAINER-ID",
		Action: func(c *cli.Context) error {
			id, err := containerID(c)
			if err != nil {
				return err
			}
			st, err := runtimeOf(c).State(id)
			if err != nil {
				return err
			}
			return printJSON(st)
		},
	}
}

func printJSON(v any) error {
	data, err := specgen.Marshal(v)
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}
