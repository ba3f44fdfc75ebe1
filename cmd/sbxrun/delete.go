package main

import "github.com/urfave/cli/v2"

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete a stopped container (with --force, kill it first); leaves no state behind",
		ArgsUsage: "CONTAINER-ID",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "kill the container if it is running"}},
		Action: func(c *cli.Context) error {
			id, err := oneID(c)
			if err != nil {
				return err
			}
			return eng(c).Containers().Delete(id, c.Bool("force"))
		},
	}
}
