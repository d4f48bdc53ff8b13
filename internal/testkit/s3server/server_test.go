package s3server

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/testkit/fixturegen/lineagegen"
)

// The harness end to end: a tree goes up and comes back by listing and by
// ranged GET, through a client configured from Env alone and through the
// counting proxy, whose counts follow the requests one by one.
func TestServer(t *testing.T) {
	s := Start(t)
	t.Logf("SeaweedFS answered S3 after %s", s.StartedIn.Round(time.Millisecond))
	ctx := context.Background()
	if err := s.CreateBucket("fleet"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fl, err := lineagegen.WriteFleet(dir, lineagegen.FleetOptions{Rollouts: 120, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	n, err := s.Upload("fleet", "homes/", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uploaded %d objects in %s", n, time.Since(began).Round(time.Millisecond))
	var want []string
	for _, f := range fl.Files {
		want = append(want, "homes/"+f.Path)
	}
	if got := listKeys(t, s.Client(), "fleet", "homes/"); !cmp.Equal(want, got) {
		t.Fatalf("listing after Upload (-want +got):\n%s", cmp.Diff(want, got))
	}

	// A client as the object-storage input builds one: from Env, with the
	// counting endpoint, signing for the proxy's Host.
	for _, kv := range s.EnvFor(s.CountingEndpoint()) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// SeaweedFS sends no checksums; the SDK would log each GET it cannot
	// validate on stderr.
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
	s.ResetCounts()

	f := fl.Files[0]
	key := "homes/" + f.Path
	local, err := os.ReadFile(filepath.Join(dir, f.Path))
	if err != nil {
		t.Fatal(err)
	}
	whole := get(t, c, "fleet", key, "")
	part := get(t, c, "fleet", key, "bytes=10-19")
	if !bytes.Equal(whole, local) || !bytes.Equal(part, local[10:20]) {
		t.Fatalf("GET gave %d bytes and bytes=10-19 gave %q; the file has %d bytes and %q", len(whole), part, len(local), local[10:20])
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fleet"), Key: aws.String(key)}); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, c, "fleet", "homes/"+fl.Homes[0]+"/"); len(got) == 0 {
		t.Fatalf("no keys under %s", fl.Homes[0])
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("fleet"), Key: aws.String("extra"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
		t.Fatal(err)
	}
	if got, want := s.ResetCounts(), (Counts{Get: 1, RangedGet: 1, Head: 1, List: 1, Put: 1, Other: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if got := s.Counts(); got != (Counts{}) {
		t.Errorf("counts after a reset: %+v", got)
	}
	// A missing key fails and is counted as failed.
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("fleet"), Key: aws.String("missing")}); err == nil {
		t.Error("HEAD of a missing key succeeded")
	}
	if got, want := s.Counts(), (Counts{Head: 1, Failed: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// Upload of a fleet of 10,000 small rollouts: the size the fleet tests
// need, which must load in well under a minute.
func TestUploadFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads 10,000 objects")
	}
	s := Start(t)
	dir := t.TempDir()
	began := time.Now()
	fl, err := lineagegen.WriteFleet(dir, lineagegen.FleetOptions{Rollouts: 10000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	generated := time.Since(began)
	if err := s.CreateBucket("fleet"); err != nil {
		t.Fatal(err)
	}
	began = time.Now()
	n, err := s.Upload("fleet", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	t.Logf("SeaweedFS started in %s; fleet of %d rollouts written in %s, uploaded in %s (%.0f objects/s)",
		s.StartedIn.Round(time.Millisecond), len(fl.Files), generated.Round(time.Millisecond), took.Round(time.Millisecond), float64(n)/took.Seconds())
	if got := listKeys(t, s.Client(), "fleet", ""); len(got) != len(fl.Files) {
		t.Errorf("listed %d keys, uploaded %d", len(got), len(fl.Files))
	}
}

func listKeys(t *testing.T, c *s3.Client, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	slices.Sort(keys)
	return keys
}

func get(t *testing.T, c *s3.Client, bucket, key, rng string) []byte {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if rng != "" {
		in.Range = aws.String(rng)
	}
	out, err := c.GetObject(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
