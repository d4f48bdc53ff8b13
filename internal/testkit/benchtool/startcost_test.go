package main

import (
	"fmt"
	"maps"
	"strings"
	"testing"
)

// The lines below are as the Go 1.26 runtime and `go tool nm -size` print
// them (taken from a build of rollout, trimmed).
const initTraceSample = `init internal/bytealg @0.005 ms, 0.002 ms clock, 0 bytes, 0 allocs
init runtime @0.36 ms, 1.4 ms clock, 0 bytes, 0 allocs
rollout v0.0.0 (commit unknown, report schema 9)
init github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints @105 ms, 0.61 ms clock, 82480 bytes, 685 allocs
init gonum.org/v1/plot @90 ms, 1.8 ms clock, 184104 bytes, 134 allocs
`

func TestParseInitTrace(t *testing.T) {
	got, err := parseInitTrace(strings.NewReader(initTraceSample))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"internal/bytealg": 0.002, "runtime": 1.4,
		"github.com/aws/aws-sdk-go-v2/service/sts/internal/endpoints": 0.61, "gonum.org/v1/plot": 1.8}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseInitTrace(strings.NewReader("init runtime @0.3 ms, x ms clock, 0 bytes\n")); err == nil {
		t.Error("an unreadable clock was accepted")
	}
}

const nmSample = `  401000        128 T runtime.text
  b01740     185738 T github.com/aws/aws-sdk-go-v2/service/s3.resolveResult
  b50000         64 T github.com/aws/aws-sdk-go-v2/service/s3.(*Client).PutObject
  b60000         32 T slices.SortFunc[go.shape.struct { a github.com/x/y.T }]
 150c000        200 R type:*fmt.pp
 150d000        300 r type:struct { Name string "json:\"name\"" }
 150e000        400 r go:func.*
 25f3a00     416880 d codeberg.org/go-fonts/liberation/liberationsansitalic..gobytes.1
 25f4000        512 t go.yaml.in/yaml/v3.(*parser).parse
 2c14c00   33554432 D crypto/internal/fips140/drbg.memory
         0 U malloc
`

func TestParseNM(t *testing.T) {
	bss := [][2]uint64{{0x2be9b20, 0x2be9b20 + 0x202b0e0}}
	got, err := parseNM(strings.NewReader(nmSample), bss)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"runtime": 128, "github.com/aws/aws-sdk-go-v2/service/s3": 185738 + 64, "slices": 32,
		"fmt": 200, "(linker)": 300 + 400, "go.yaml.in/yaml/v3": 512, "codeberg.org/go-fonts/liberation/liberationsansitalic": 416880}
	if !maps.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestStartcostRows(t *testing.T) {
	mods := parseModules("bin: go1.26.8\n\tpath\tgithub.com/rollout-dev/rollout/cmd/rollout\n\tmod\tgithub.com/rollout-dev/rollout\t(devel)\t\n" +
		"\tdep\tgithub.com/aws/aws-sdk-go-v2\tv1.48.0\th1:x=\n\tdep\tgithub.com/aws/aws-sdk-go-v2/service/s3\tv1.114.10\th1:y=\n\tbuild\t-trimpath=true\n")
	if want := []string{"github.com/rollout-dev/rollout", "github.com/aws/aws-sdk-go-v2", "github.com/aws/aws-sdk-go-v2/service/s3"}; strings.Join(mods, " ") != strings.Join(want, " ") {
		t.Fatalf("modules %q, want %q", mods, want)
	}
	inits := map[string][]float64{
		"github.com/aws/aws-sdk-go-v2/service/s3/internal/endpoints": {0.9, 0.5, 0.6}, // median 0.6, mean 0.67
		"github.com/aws/aws-sdk-go-v2/aws":                           {0.1, 0.3},      // median 0.2
		"github.com/aws/aws-sdk-go-v2/service/s3":                    {0.1},
		"runtime": {1.0},
	}
	sizes := map[string]int64{"github.com/aws/aws-sdk-go-v2/service/s3": 500, "github.com/aws/aws-sdk-go-v2/service/s3x": 7,
		"github.com/rollout-dev/rollout/checks": 40, "(linker)": 9}
	rows := startcostRows(mods, inits, sizes)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %d %.2f %d", r.module, r.packages, r.initMs, r.bytes))
	}
	// s3x is not s3: a module owns the paths under it at a slash.
	want := []string{"std 1 1.00 0", "github.com/aws/aws-sdk-go-v2/service/s3 2 0.70 500", "github.com/aws/aws-sdk-go-v2 1 0.20 7",
		"github.com/rollout-dev/rollout 0 0.00 40", "(linker) 0 0.00 9"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
