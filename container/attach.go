package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

var attachmentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}\.json$`) })

func (r *Runtime) attachmentPath(id, name string) (string, error) {
	if !attachmentName().MatchString(name) {
		return "", fmt.Errorf("bad attachment name %q", name)
	}
	return filepath.Join(r.Root, id, "sbx-"+name), nil
}

// attach writes a new container's attachments into its state directory,
// which libcontainer removes with the container. Files are created
// exclusively, never through a symlink.
func (r *Runtime) attach(id string, files map[string][]byte) error {
	for name, data := range files {
		p, err := r.attachmentPath(id, name)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if err != nil {
			return fmt.Errorf("writing attachment %s: %w", name, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("writing attachment %s: %w", name, werr)
		}
	}
	return nil
}

// Attachment returns a container's attachment, or (nil, nil) if the
// container has none by that name; an unknown container is NotFound.
func (r *Runtime) Attachment(id, name string) ([]byte, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	p, err := r.attachmentPath(id, name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(r.Root, id, "state.json")); errors.Is(err, os.ErrNotExist) {
		return nil, notExist(id)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading attachment %s of %s: %w", name, id, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading attachment %s of %s: %w", name, id, err)
	}
	return data, nil
}
