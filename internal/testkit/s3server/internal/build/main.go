// Command build builds the SeaweedFS the tests run into the cache outside
// the repository (s3server.Binary), unless it is there: .ci/run runs it
// before the suite, and so can anyone (go run
// ./internal/testkit/s3server/internal/build).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rollout-dev/rollout/internal/testkit/s3server"
)

func main() {
	if bin, ok := s3server.Installed(); ok {
		fmt.Printf("seaweedfs %s: %s (cached)\n", s3server.Version, bin)
		return
	}
	fmt.Printf("seaweedfs %s: building weed (several minutes on 2 cores)\n", s3server.Version)
	start := time.Now()
	bin, err := s3server.Build(context.Background(), os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "seaweedfs %s: build failed: %v\n", s3server.Version, err)
		os.Exit(1)
	}
	fmt.Printf("seaweedfs %s: %s (built in %s)\n", s3server.Version, bin, time.Since(start).Round(time.Second))
}
