package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/engine"
)

func createCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "create a container from a bundle, enforcing its tier; start it with `start`",
		ArgsUsage: "CONTAINER-ID",
		Flags:     createFlags(),
		Action: func(c *cli.Context) error {
			req, err := createRequest(c)
			if err != nil {
				return err
			}
			return eng(c).Create(req)
		},
	}
}

// createFlags are shared by create and run (one code path).
func createFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "bundle", Aliases: []string{"b"}, Usage: "bundle directory (default: the current directory)"},
		&cli.StringFlag{Name: "pid-file", Usage: "file to write the container's init pid to"},
		&cli.StringFlag{Name: "console-socket", Usage: "unix socket that receives the pty master of a terminal container"},
		&cli.BoolFlag{Name: "no-pivot", Usage: "do not use pivot_root (needed on a ramdisk rootfs)"},
		&cli.BoolFlag{Name: "no-new-keyring", Usage: "do not create a new session keyring"},
		&cli.IntFlag{Name: "preserve-fds", Usage: "pass this many extra fds (3, 4, …) to the container"},
	}
}

func createRequest(c *cli.Context) (engine.CreateRequest, error) {
	id, err := oneID(c)
	if err != nil {
		return engine.CreateRequest{}, err
	}
	return engine.CreateRequest{ID: id, Bundle: c.String("bundle"), PidFile: c.String("pid-file"),
		ConsoleSocket: c.String("console-socket"), NoPivot: c.Bool("no-pivot"), NoNewKeyring: c.Bool("no-new-keyring"),
		PreserveFDs: c.Int("preserve-fds")}, nil
}
