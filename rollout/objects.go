package rollout

import (
	"context"
	"errors"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/rollout-dev/rollout/internal/base/objstore"
)

// discoverObjects is Discover for an object storage URI: an object names
// itself; otherwise the URI is a prefix, listed as a directory is walked
// (the rollouts under it, a plain object winning over its .zst twin, in
// name order). The listing pins what it saw (objstore.Pin): later reads
// take those bytes and ask no HEAD.
func discoverObjects(uri string) (*Discovery, error) {
	ctx := context.Background()
	_, key, err := objstore.Split(uri)
	if err != nil {
		return nil, &PathError{uri, err}
	}
	if key != "" && !strings.HasSuffix(key, "/") {
		o, err := objstore.Stat(ctx, uri)
		if err == nil {
			objstore.Pin(o)
			return &Discovery{Paths: []string{uri}}, nil
		}
		if !errors.Is(err, objstore.ErrNotExist) {
			return nil, &PathError{uri, err}
		}
		uri += "/"
	}
	objs, err := objstore.List(ctx, uri)
	if err != nil {
		return nil, &PathError{uri, err}
	}
	if len(objs) == 0 {
		return nil, &PathError{strings.TrimSuffix(uri, "/"), objstore.ErrNotExist}
	}
	d := &Discovery{}
	plain := map[string]bool{}
	var zst []string
	for _, o := range objs {
		switch rolloutName(path.Base(o.URI)) {
		case plainRollout:
			objstore.Pin(o)
			plain[o.URI] = true
			d.Paths = append(d.Paths, o.URI)
		case zstRollout:
			objstore.Pin(o)
			zst = append(zst, o.URI)
		case otherJSONL:
			d.Ignored = append(d.Ignored, o.URI)
		}
	}
	for _, z := range zst {
		if !plain[strings.TrimSuffix(z, ".zst")] {
			d.Paths = append(d.Paths, z)
		}
	}
	if len(d.Paths) == 0 {
		return nil, &PathError{strings.TrimSuffix(uri, "/"), ErrNoRollouts}
	}
	sort.Strings(d.Paths)
	return d, nil
}

// headBytes is the first range a head read asks for: a session_meta line
// with Codex's base instructions fits (they run to about 20 kB).
const headBytes = 64 << 10

// openHead opens path to read its first lines: for an object, ranges that
// grow as the reader wants more (objstore.OpenHead), up to limit bytes.
func openHead(path string, limit int64) (io.ReadCloser, error) {
	if !objstore.IsURI(path) {
		return Open(path, nil)
	}
	raw, err := objstore.OpenHead(context.Background(), path, headBytes, limit)
	if err != nil {
		return nil, &PathError{path, err}
	}
	r, _, err := Decode(path, raw)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return opened{r, closers{r, raw}}, nil
}
