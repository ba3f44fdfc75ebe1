package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/sbxrun/sbxrun/errcode"
)

func killCommand() *cli.Command {
	return &cli.Command{
		Name:      "kill",
		Usage:     "send a signal (name or number, default SIGTERM) to a container",
		ArgsUsage: "CONTAINER-ID [SIGNAL]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "signal every process of the container"}},
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return errcode.Errorf(errcode.ConfigInvalid, "kill takes a container id and an optional signal")
			}
			sig := unix.SIGTERM
			if c.NArg() == 2 {
				var err error
				if sig, err = parseSignal(c.Args().Get(1)); err != nil {
					return err
				}
			}
			return eng(c).Containers().Signal(c.Args().First(), sig, c.Bool("all"))
		},
	}
}

// parseSignal accepts "9", "KILL" and "SIGKILL".
func parseSignal(s string) (unix.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 64 {
			return 0, errcode.Errorf(errcode.ConfigInvalid, "signal %d out of range", n)
		}
		return unix.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, errcode.Errorf(errcode.ConfigInvalid, "unknown signal %q", s)
}
