// Package objstore reads rollouts from object storage: an input named
// s3://BUCKET/KEY is an object, s3://BUCKET/PREFIX/ (or a prefix that names
// no object) a "directory" listed like one. Everything that speaks S3 is in:
// AWS, and through AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) MinIO, Ceph,
// R2, SeaweedFS, GCS's interoperability API. Credentials and region come
// from the AWS SDK's standard chain (environment, shared config and
// credentials files with profiles and SSO, web identity as EKS sets it,
// container and instance metadata), as the aws CLI finds them.
//
// Reads are streamed: one GET per object, ranged to the size a manifest
// recorded (Pin), resumed where it broke on a dropped connection. It is
// the lowest stage: rollout/ opens and lists through it.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// Scheme is the one URI scheme served.
const Scheme = "s3://"

// ErrNotExist is an object (or prefix) that is not there; it is
// fs.ErrNotExist too, so callers classify it as they do a missing file.
var ErrNotExist error = notExist{}

type notExist struct{}

func (notExist) Error() string        { return "no such object" }
func (notExist) Is(target error) bool { return target == fs.ErrNotExist }

// IsURI reports whether an input names object storage rather than a local
// path: any SCHEME:// prefix, so that an unsupported scheme is refused by
// name instead of being looked up as a relative directory called "gs:".
func IsURI(p string) bool {
	i := strings.Index(p, "://")
	if i <= 0 {
		return false
	}
	for _, c := range p[:i] {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Object is one stored object: what a listing or a HEAD says of it.
type Object struct {
	URI      string
	Size     int64
	ETag     string // as the server quotes it
	Modified time.Time
}

// Version names the object's content as stored: its ETag, else (a local
// file, StatAny) its modification time, RFC 3339 in UTC to the nanosecond;
// "" when neither is known (a description that failed).
func (o Object) Version() string {
	switch {
	case o.ETag != "":
		return o.ETag
	case o.Modified.IsZero():
		return ""
	}
	return o.Modified.UTC().Format(time.RFC3339Nano)
}

// Split returns a URI's bucket and key.
func Split(uri string) (bucket, key string, err error) {
	if !strings.HasPrefix(uri, Scheme) {
		scheme, _, _ := strings.Cut(uri, "://")
		return "", "", fmt.Errorf("the %s:// scheme is not supported: object storage is read through s3:// (GCS and others speak S3 through AWS_ENDPOINT_URL_S3, docs/scale.md)", scheme)
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(uri, Scheme), "/")
	if bucket == "" {
		return "", "", errors.New("no bucket in the URI (s3://BUCKET/KEY)")
	}
	return bucket, key, nil
}

var (
	clientOnce sync.Once
	client     *s3.Client
	clientErr  error
)

// s3Client is the process's client, made on first use: a run that names
// no object never reads the AWS configuration.
func s3Client() (*s3.Client, error) {
	clientOnce.Do(func() {
		ctx := context.Background()
		// The SDK's own log lines (IMDS fallbacks) would interleave with
		// reports on stderr: errors carry what a user needs.
		cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(logging.Nop{}))
		if err != nil {
			clientErr = fmt.Errorf("object storage configuration: %w", err)
			return
		}
		if cfg.Region == "" {
			// S3 needs a region to sign; buckets of S3-compatible stores
			// answer any, and AWS redirects to the right one (named in
			// the error).
			cfg.Region = "us-east-1"
		}
		// A custom endpoint is an S3-compatible store: they serve buckets
		// as paths (MinIO, SeaweedFS and Ceph by default).
		custom := os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
		client = s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.UsePathStyle = custom
			// Stores that do not send checksums must not fail reads.
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		})
	})
	return client, clientErr
}

// clientFor is the client and the bucket and key of a URI.
func clientFor(uri string) (*s3.Client, string, string, error) {
	bucket, key, err := Split(uri)
	if err != nil {
		return nil, "", "", err
	}
	c, err := s3Client()
	return c, bucket, key, err
}

// pins are the objects a manifest or a listing described: what Open reads
// and Stat answers without asking the server.
var pins sync.Map // URI -> Object

// Pin records objects as a manifest or a listing saw them: Open reads only
// the bytes they had then (a rollout grows by appends; what came later is
// for the next run), and Stat answers from the record.
func Pin(objs ...Object) {
	for _, o := range objs {
		pins.Store(o.URI, o)
	}
}

// Pinned is what Pin recorded of uri, asking nothing of the server.
func Pinned(uri string) (Object, bool) {
	o, ok := pins.Load(uri)
	if !ok {
		return Object{}, false
	}
	return o.(Object), true
}

// Stat describes the object at uri (a HEAD unless pinned).
func Stat(ctx context.Context, uri string) (Object, error) {
	if o, ok := pins.Load(uri); ok {
		return o.(Object), nil
	}
	c, bucket, key, err := clientFor(uri)
	if err != nil {
		return Object{}, err
	}
	out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return Object{}, explain(err)
	}
	return Object{URI: uri, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

// List returns the objects under prefix (a URI; "" key: the whole bucket)
// in key order, one LIST request per 1,000.
func List(ctx context.Context, prefix string) ([]Object, error) {
	c, bucket, key, err := clientFor(prefix)
	if err != nil {
		return nil, err
	}
	var out []Object
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &key})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, explain(err)
		}
		for _, o := range page.Contents {
			out = append(out, Object{URI: Scheme + bucket + "/" + aws.ToString(o.Key), Size: aws.ToInt64(o.Size),
				ETag: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// Open streams the object at uri from byte off: to its pinned size when
// pinned, else to its end. n >= 0 reads at most n bytes (a head).
func Open(ctx context.Context, uri string, off, n int64) (io.ReadCloser, error) {
	if off == 0 && n < 0 {
		if f := take(uri); f != nil {
			return io.NopCloser(bytes.NewReader(f.data)), nil
		}
	}
	return get(ctx, uri, off, n)
}

// get is Open without the read-ahead.
func get(ctx context.Context, uri string, off, n int64) (io.ReadCloser, error) {
	c, bucket, key, err := clientFor(uri)
	if err != nil {
		return nil, err
	}
	end := int64(-1) // exclusive; -1: the object's end
	var etag string
	if o, ok := pins.Load(uri); ok {
		end, etag = o.(Object).Size, o.(Object).ETag
		if off >= end {
			return io.NopCloser(strings.NewReader("")), nil
		}
	}
	if n >= 0 && (end < 0 || off+n < end) {
		end = off + n
	}
	r := &reader{ctx: ctx, c: c, bucket: bucket, key: key, off: off, end: end}
	if err := r.open(); err != nil {
		return nil, err
	}
	if r.etag == "" {
		r.etag = etag
	}
	return r, nil
}

// OpenHead streams the head of the object at uri: a first range of first
// bytes, then ranges twice as long as long as the reader wants more, up to
// limit. Reading a session_meta line costs one small GET, not a stream of
// the whole object cut short (which also costs the connection).
func OpenHead(ctx context.Context, uri string, first, limit int64) (io.ReadCloser, error) {
	r, err := Open(ctx, uri, 0, first)
	if err != nil {
		return nil, err
	}
	if rd, ok := r.(*reader); ok {
		rd.limit = limit
		if o, ok := pins.Load(uri); ok {
			rd.limit = min(limit, o.(Object).Size)
		}
	}
	return r, nil
}

// reader is a GET that resumes from where its stream broke, pinned to the
// ETag the first response had: a changed object fails instead of mixing
// two versions.
type reader struct {
	ctx         context.Context
	c           *s3.Client
	bucket, key string
	off, end    int64
	etag        string
	limit       int64 // OpenHead's: extend end up to here
	short       bool  // the object ends before the range asked
	body        io.ReadCloser
	resumed     int
}

const maxResumes = 3

func (r *reader) open() error {
	in := &s3.GetObjectInput{Bucket: &r.bucket, Key: &r.key}
	switch {
	case r.end >= 0:
		if r.end <= r.off {
			r.body = io.NopCloser(strings.NewReader(""))
			return nil
		}
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", r.off, r.end-1))
	case r.off > 0:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", r.off))
	}
	if r.etag != "" {
		in.IfMatch = &r.etag
	}
	out, err := r.c.GetObject(r.ctx, in)
	if err != nil {
		if isRangeNotSatisfiable(err) {
			// An empty object, or one shorter than the range asked.
			r.body, r.short = io.NopCloser(strings.NewReader("")), true
			return nil
		}
		return explain(err)
	}
	r.body = out.Body
	if in.Range != nil && out.ContentRange != nil {
		// "bytes A-B/SIZE": an object that ends before the range does
		// ends the read there.
		if _, total, ok := strings.Cut(*out.ContentRange, "/"); ok {
			var size int64
			if _, err := fmt.Sscan(total, &size); err == nil && size < r.end {
				r.end, r.short = size, true
			}
		}
	}
	if r.etag == "" {
		r.etag = aws.ToString(out.ETag)
	}
	return nil
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	r.off += int64(n)
	if errors.Is(err, io.EOF) && r.end >= 0 && r.off >= r.end && r.end < r.limit && !r.short {
		// A head read that wants more: the next, longer range.
		r.body.Close()
		r.end = min(r.limit, 2*r.end)
		if oerr := r.open(); oerr != nil {
			return n, oerr
		}
		return n, nil
	}
	if err == nil || errors.Is(err, io.EOF) && (r.end < 0 || r.off >= r.end || r.short) {
		return n, err
	}
	// The stream broke, or ended before the range did: ask for the rest.
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if r.resumed == maxResumes || r.ctx.Err() != nil {
		return n, err
	}
	r.body.Close()
	r.resumed++
	if oerr := r.open(); oerr != nil {
		return n, fmt.Errorf("%w (resuming at byte %d: %w)", err, r.off, oerr)
	}
	return n, nil
}

func (r *reader) Close() error { return r.body.Close() }

func isRangeNotSatisfiable(err error) bool {
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable
}

// explain turns the SDK's errors into what a user acts on: missing objects
// are ErrNotExist, denials and wrong regions say so with the server's code.
func explain(err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return ErrNotExist
		case http.StatusPreconditionFailed:
			return errors.New("the object changed while it was read (its ETag differs): run again")
		}
	}
	if strings.Contains(err.Error(), "get credentials") {
		return errors.New("no AWS credentials found (environment, shared config and credentials files, web identity, container or instance role): set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound":
			return fmt.Errorf("%w (%s)", ErrNotExist, ae.ErrorCode())
		case "PermanentRedirect", "AuthorizationHeaderMalformed":
			return fmt.Errorf("%s: the bucket is in another region: set AWS_REGION", ae.ErrorCode())
		}
		return fmt.Errorf("%s: %s", ae.ErrorCode(), ae.ErrorMessage())
	}
	return err
}

// StatAny is Stat for an object, and the same description of a local file
// (no ETag): what a command that takes either needs to know of its input.
func StatAny(ctx context.Context, p string) (Object, error) {
	if IsURI(p) {
		return Stat(ctx, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return Object{}, err
	}
	return Object{URI: p, Size: fi.Size(), Modified: fi.ModTime()}, nil
}
