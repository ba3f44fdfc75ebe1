package engine

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sbxrun/sbxrun/errcode"
)

// OutputPath decides where `spec` writes, before anything is compiled, so
// a bad destination is reported as such whatever else is wrong: "-" is
// stdout; the default is BUNDLE/config.json for the OCI format and stdout
// otherwise. The bundle must be a directory; the file may not exist yet, or
// (with force) must be a regular file. Devices, FIFOs, directories and
// symlinks are refused: writing through them would go somewhere else than
// the named file.
func OutputPath(out, bundle, format string, force bool) (string, error) {
	if out == "" {
		out = "-"
		if format == FormatOCI || format == "" {
			if bundle == "" {
				bundle = "."
			}
			fi, err := os.Stat(bundle)
			if err != nil || !fi.IsDir() {
				return "", errcode.Errorf(errcode.ConfigInvalid, "bundle %s is not a directory", bundle)
			}
			out = filepath.Join(bundle, "config.json")
		}
	}
	if out == "-" {
		return out, nil
	}
	fi, err := os.Lstat(out)
	switch {
	case os.IsNotExist(err):
		if d, err := os.Stat(filepath.Dir(out)); err != nil || !d.IsDir() {
			return "", errcode.Errorf(errcode.ConfigInvalid, "output directory %s does not exist", filepath.Dir(out))
		}
		return out, nil
	case err != nil:
		return "", errcode.Errorf(errcode.ConfigInvalid, "output %s: %v", out, err)
	case !fi.Mode().IsRegular():
		return "", errcode.Errorf(errcode.ConfigInvalid, "output %s is not a regular file (%s); refusing to write through it", out, fi.Mode().Type())
	case !force:
		return "", errcode.Errorf(errcode.ConfigInvalid, "%s exists; remove it or pass --force", out)
	}
	return out, nil
}

// WriteOutput writes data to out ("-" is stdout) atomically: a temporary
// file in the same directory renamed over the target, so a reader never
// sees a partial spec and a failure leaves nothing behind.
func WriteOutput(out string, data []byte, stdout io.Writer) error {
	if out == "-" {
		_, err := stdout.Write(data)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
