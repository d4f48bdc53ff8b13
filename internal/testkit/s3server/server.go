package s3server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The fixed identity the server accepts; Env hands it to clients.
const (
	AccessKey = "rollout-test-access"
	SecretKey = "rollout-test-secret-key-0123456789"
	Region    = "us-east-1"
)

// Server is a running SeaweedFS with its S3 gateway.
type Server struct {
	// Endpoint is the S3 gateway, http://127.0.0.1:PORT.
	Endpoint string
	// StartedIn is how long the server took to answer S3 requests.
	StartedIn time.Duration
	// PID is weed's process id (for a benchmark to read its CPU time).
	PID int

	t       testing.TB
	dir     string // the server's directory: data, configuration, log
	logPath string
	client  *s3.Client

	proxyOnce sync.Once
	proxy     *countingProxy
}

// Start runs a SeaweedFS server for the test and stops it (the whole
// process group) when the test ends; the test is skipped when weed is not
// built. The weed log is kept in the server's directory and its tail is
// logged when the test fails.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, ok := Installed()
	if !ok {
		t.Skipf("SeaweedFS not built (no %s): run .ci/run, or go run ./internal/testkit/s3server/internal/build (see internal/testkit/s3server)", bin)
	}
	var err error
	// A port taken between choosing it and weed binding it (other tests,
	// other sessions) fails the start: try again on new ports.
	for range 3 {
		var s *Server
		if s, err = start(t, bin); err == nil {
			return s
		}
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("starting SeaweedFS: %v", err)
	return nil
}

var errPortTaken = errors.New("a port was taken")

func start(t testing.TB, bin string) (*Server, error) {
	dir := t.TempDir()
	s := &Server{t: t, dir: dir, logPath: filepath.Join(dir, "weed.log")}
	identities := fmt.Sprintf(`{"identities":[{"name":"rollout-test","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","List","Tagging","Write"]}]}`, AccessKey, SecretKey)
	for name, content := range map[string]string{"s3.json": identities, "aws-config": "", "aws-credentials": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	// The filer keeps its store in the master's directory.
	for _, d := range []string{"data", "master"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	// Every gRPC port is chosen too: weed's default, the HTTP port plus
	// 10,000, overflows for an ephemeral port.
	p, err := freePorts(10)
	if err != nil {
		return nil, err
	}
	// weed mini, not weed server: its single-master mode skips the waits
	// a cluster needs (the filer's membership confirm, the first volume
	// id's hold), so a write succeeds 5-6 s after the start instead of 12.
	args := []string{"mini",
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-dir=" + filepath.Join(dir, "data"), "-master.dir=" + filepath.Join(dir, "master"),
		"-master.port=" + p[0], "-master.port.grpc=" + p[1],
		"-volume.port=" + p[2], "-volume.port.grpc=" + p[3],
		"-filer.port=" + p[4], "-filer.port.grpc=" + p[5],
		"-s3.port=" + p[6], "-s3.port.grpc=" + p[7],
		"-admin.port=" + p[8], "-admin.port.grpc=" + p[9], "-admin.port.legacy=0",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false",
		"-s3.config=" + filepath.Join(dir, "s3.json"),
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
		"-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
		// Small volumes, many of them: a test stores megabytes, and each
		// bucket gets volumes of its own.
		"-master.volumeSizeLimitMB=64", "-volume.max=100",
		"-volume.preStopSeconds=0",
		"-master.telemetry=false",
	}
	cmd := exec.Command(bin, args...)
	// Its glog files go to TMPDIR; nothing of the user's configuration
	// (~/.seaweedfs) is read.
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	ownGroup(cmd)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("running %s: %w", bin, err)
	}
	s.PID = cmd.Process.Pid
	exited := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		select {
		case <-exited:
			// Reaped: its group id may be another's by now.
		default:
			killGroup(cmd)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
			}
		}
		// weed names its gRPC sockets in /tmp, whatever TMPDIR says, and a
		// killed weed leaves them behind.
		for i, name := range []string{"master", "volume", "filer", "s3", "admin"} {
			os.Remove(fmt.Sprintf("/tmp/seaweedfs-%s-grpc-%s.sock", name, p[2*i+1]))
		}
	})
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("weed log (tail):\n%s", s.Log())
		}
	})
	s.Endpoint = "http://127.0.0.1:" + p[6]
	s.client = s.NewClient(s.Endpoint)
	if err := s.waitReady(exited, &exitErr); err != nil {
		stop()
		if strings.Contains(s.Log(), "address already in use") {
			return nil, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, err // the cleanup logs the weed log
	}
	s.StartedIn = time.Since(began)
	return s, nil
}

// waitReady polls until a signed ListBuckets succeeds: the gateway is up,
// it knows the identity and it reaches the filer.
func (s *Server) waitReady(exited <-chan struct{}, exitErr *error) error {
	deadline := time.Now().Add(90 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("weed exited before S3 answered: %v", *exitErr)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = s.client.ListBuckets(ctx, &s3.ListBucketsInput{})
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("S3 did not answer within 90s: %v", err)
}

func freePorts(n int) ([]string, error) {
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		// Held until all are chosen, so that the n ports differ.
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

// Log is the tail of the weed log (its last 64 KB).
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	return string(b)
}

// Env is the environment a client of the S3 gateway needs: its endpoint,
// the keys and the region, and no configuration of the user's (no shared
// config or credentials file, no profile, no session token, no instance
// metadata).
func (s *Server) Env() []string {
	return s.EnvFor(s.Endpoint)
}

// EnvFor is Env with another endpoint, CountingEndpoint's for instance.
func (s *Server) EnvFor(endpoint string) []string {
	return []string{
		"AWS_ENDPOINT_URL_S3=" + endpoint,
		"AWS_ENDPOINT_URL=" + endpoint,
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + Region,
		"AWS_DEFAULT_REGION=" + Region,
		"AWS_PROFILE=",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_CONFIG_FILE=" + filepath.Join(s.dir, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(s.dir, "aws-credentials"),
	}
}

// Client is an S3 client of the server (path-style, the fixed keys).
func (s *Server) Client() *s3.Client { return s.client }

// NewClient is an S3 client of the server at endpoint (the server's own, or
// CountingEndpoint), configured in code: nothing of the environment.
func (s *Server) NewClient(endpoint string) *s3.Client {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		// Upload's workers each keep a connection.
		tr.MaxIdleConnsPerHost = 64
	})
	return s3.New(s3.Options{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		HTTPClient:   httpClient,
	})
}

// CreateBucket creates a bucket.
func (s *Server) CreateBucket(name string) error {
	_, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		return fmt.Errorf("creating bucket %s: %w", name, err)
	}
	return nil
}

// Upload puts every regular file under dir into bucket, at prefix followed
// by its slash path relative to dir, with parallel PutObjects, and
// returns how many it put.
func (s *Server) Upload(bucket, prefix, dir string) (int, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rels = append(rels, rel)
		return nil
	})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	work := make(chan string)
	var wg sync.WaitGroup
	for range uploadWorkers {
		wg.Go(func() {
			for rel := range work {
				if err := s.put(ctx, bucket, prefix+filepath.ToSlash(rel), filepath.Join(dir, rel)); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, rel := range rels {
		select {
		case work <- rel:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	return len(rels), nil
}

// uploadWorkers is how many PutObjects Upload keeps in flight: 16, 32
// and 64 loaded 10,000 small objects in 19.5 s, 18.8 s and 28.7 s on 2
// busy cores. weed filer.copy (-c 32), which goes around the S3 gateway,
// took 13-15 s: not enough faster to give up loading through S3 itself.
const uploadWorkers = 32

func (s *Server) put(ctx context.Context, bucket, key, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
		Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b)))})
	if err != nil {
		return fmt.Errorf("putting s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}
