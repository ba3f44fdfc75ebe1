package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/urfave/cli/v2"

	"github.com/sbxrun/sbxrun/enforce"
	"github.com/sbxrun/sbxrun/errcode"
	"github.com/sbxrun/sbxrun/policy"
	"github.com/sbxrun/sbxrun/specgen"
)

func lintCommand() *cli.Command {
	return &cli.Command{
		Name:      "lint",
		Usage:     "check an OCI config.json against a tier; exit 0 only if it complies",
		ArgsUsage: "CONFIG.JSON|-",
		Description: "Prints every violation with its code and JSON path. The tier comes from --tier,\n" +
			"else from the spec's dev.sbx.tier annotation. Exit status 5 (SANDBOX_SPEC_NONCOMPLIANT)\n" +
			"when anything violates the tier: use it as a CI gate.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tier", Usage: "tier to check against (default: the spec's dev.sbx.tier annotation)"},
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "YAML config that narrows the tier, as used to generate the spec"},
			&cli.BoolFlag{Name: "rootless", Usage: "check against the rootless form of the tier"},
			&cli.StringFlag{Name: "arch", Usage: "target architecture (default: this machine's)"},
			&cli.BoolFlag{Name: "reference-host", Usage: "check against the tier as compiled for the reference host"},
			&cli.StringFlag{Name: "format", Usage: "text or json", Value: "text"},
		},
		Action: runLint,
	}
}

const maxSpecBytes = 8 << 20

func readSpec(path string) (*specs.Spec, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, errcode.Errorf(errcode.SpecInvalid, "reading spec: %v", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSpecBytes+1))
	if err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "reading spec: %v", err)
	}
	if len(data) > maxSpecBytes {
		return nil, errcode.Errorf(errcode.SpecInvalid, "spec is larger than %d bytes", maxSpecBytes)
	}
	var s specs.Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, errcode.Errorf(errcode.SpecInvalid, "parsing spec: %v", err)
	}
	return &s, nil
}

func runLint(c *cli.Context) error {
	if c.NArg() != 1 {
		return errcode.Errorf(errcode.ConfigInvalid, "lint takes one spec file (or - for stdin)")
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return errcode.Errorf(errcode.ConfigInvalid, "--format must be text or json")
	}
	s, err := readSpec(c.Args().First())
	if err != nil {
		return err
	}
	tier := c.String("tier")
	if tier == "" {
		tier = s.Annotations[specgen.AnnotationTier]
	}
	if tier == "" {
		return errcode.Errorf(errcode.ProfileUnknown, "no --tier given and the spec has no %s annotation", specgen.AnnotationTier)
	}
	cfg, err := readConfig(c.String("config"))
	if err != nil {
		return err
	}
	g, err := policy.Compile(tier, cfg, probeFacts(c), nil)
	if err != nil {
		return err
	}
	vs := enforce.Lint(s, g)
	if format == "json" {
		data, err := specgen.Marshal(struct {
			Tier       string              `json:"tier"`
			Compliant  bool                `json:"compliant"`
			Violations []enforce.Violation `json:"violations"`
		}{g.Tier, len(vs) == 0, append([]enforce.Violation{}, vs...)})
		if err != nil {
			return err
		}
		os.Stdout.Write(data)
	} else {
		for _, v := range vs {
			fmt.Println(v)
		}
	}
	if len(vs) > 0 {
		return errcode.Errorf(errcode.SpecNoncompliant, "%d violation(s) of tier %s", len(vs), g.Tier)
	}
	if format == "text" {
		fmt.Printf("ok: complies with tier %s\n", g.Tier)
	}
	return nil
}
