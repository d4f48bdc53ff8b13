package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cmdStartcost says what each module costs a start of rollout and what it
// adds to the binary (issue 38: "say what each dependency costs at start
// and in size"). Init time is the runtime's own report
// (GODEBUG=inittrace=1) over several starts of `rollout version`, the
// median per package, summed by module; size is `go tool nm -size` of a
// binary with its symbol table, summed by module, counting only symbols
// that occupy the file (not .bss).
func cmdStartcost(args []string) error {
	fs := flag.NewFlagSet("startcost", flag.ContinueOnError)
	bin := fs.String("rollout", "", "the rollout binary to start (required)")
	syms := fs.String("symbols", "", "the same build with its symbol table, for sizes (default: -rollout)")
	md := fs.String("md", "", "also write the report into this Markdown file (its section `startcost`)")
	starts := fs.Int("starts", 21, "starts of `rollout version` measured")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *bin == "" || fs.NArg() > 0 || *starts < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchtool startcost -rollout BINARY [-symbols BINARY] [-md FILE] [-starts 21]")
		return exitError(2)
	}
	if *syms == "" {
		*syms = *bin
	}
	if p, err := filepath.Abs(*bin); err == nil && strings.ContainsRune(*bin, os.PathSeparator) {
		*bin = p
	}
	mods, err := binaryModules(*syms)
	if err != nil {
		return err
	}
	inits := map[string][]float64{} // package -> init clock (ms) of each start
	var cpus []float64              // CPU (ms) of each start
	var load loadLog
	start := func(env ...string) (*exec.Cmd, *bytes.Buffer, error) {
		cmd := exec.Command(*bin, "version")
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, nil, fmt.Errorf("%s version: %v: %s", *bin, err, stderr.Bytes())
		}
		return cmd, &stderr, nil
	}
	for range *starts {
		// A plain start for the CPU (writing the trace costs some), then a
		// traced one for the inits.
		load.sample()
		cmd, _, err := start()
		if err != nil {
			return err
		}
		cpus = append(cpus, float64(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())/float64(time.Millisecond))
		_, stderr, err := start("GODEBUG=inittrace=1")
		if err != nil {
			return err
		}
		trace, err := parseInitTrace(stderr)
		if err != nil {
			return err
		}
		for pkg, ms := range trace {
			inits[pkg] = append(inits[pkg], ms)
		}
	}
	sizes, err := symbolSizes(*syms)
	if err != nil {
		return err
	}
	fi, err := os.Stat(*syms)
	if err != nil {
		return err
	}
	rows := startcostRows(mods, inits, sizes)
	rep := startcostReport(rows, medianOf(cpus), *starts, fi.Size(), load.String())
	fmt.Print(rep)
	if *md != "" {
		return writeSection(*md, "startcost", rep)
	}
	return nil
}

// parseInitTrace reads the runtime's inittrace lines
// ("init PKG @T ms, C ms clock, B bytes, N allocs") and returns each
// package's init clock in milliseconds; other lines are skipped.
func parseInitTrace(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "init ")
		if !ok {
			continue
		}
		pkg, rest, ok := strings.Cut(rest, " @")
		_, clock, ok2 := strings.Cut(rest, " ms, ")
		clock, _, ok3 := strings.Cut(clock, " ms clock")
		if !ok || !ok2 || !ok3 {
			return nil, fmt.Errorf("inittrace: cannot read %q", line)
		}
		ms, err := strconv.ParseFloat(clock, 64)
		if err != nil {
			return nil, fmt.Errorf("inittrace: cannot read %q: %v", line, err)
		}
		out[pkg] += ms
	}
	return out, sc.Err()
}

// binaryModules lists the modules `go version -m` says the binary holds
// (its main module and every dependency).
func binaryModules(bin string) ([]string, error) {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go version -m %s: %v", bin, err)
	}
	return parseModules(string(out)), nil
}

func parseModules(s string) []string {
	var mods []string
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "mod" || f[0] == "dep") {
			mods = append(mods, f[1])
		}
	}
	return mods
}

// moduleOf is the module a package belongs to: the longest module path
// that is the package path or a prefix of it at a slash; the standard
// library ("std") when none is.
func moduleOf(pkg string, mods []string) string {
	best := ""
	for _, m := range mods {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return "std"
	}
	return best
}

// symbolSizes sums `go tool nm -size` by package path, leaving out the
// symbols of sections that take no room in the file (.bss, .noptrbss).
func symbolSizes(bin string) (map[string]int64, error) {
	out, err := exec.Command("go", "tool", "nm", "-size", bin).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool nm -size %s: %v (a stripped binary has no symbols: pass -symbols)", bin, err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var empty [][2]uint64
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS && s.Addr != 0 {
			empty = append(empty, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	return parseNM(bytes.NewReader(out), empty)
}

// parseNM reads `go tool nm -size` lines (address, size, type, name; a
// name may hold spaces) and sums the sizes by package path, skipping
// undefined symbols and those whose address is in one of the empty
// (address-only) ranges.
func parseNM(r io.Reader, empty [][2]uint64) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		addr, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("nm: cannot read %q", sc.Text())
		}
		if f[2] == "U" || slices.ContainsFunc(empty, func(e [2]uint64) bool { return addr >= e[0] && addr < e[1] }) {
			continue
		}
		_, name, _ := strings.Cut(sc.Text(), " "+f[2]+" ")
		out[symbolPackage(name)] += size
	}
	return out, sc.Err()
}

// symbolPackage is the package path of a Go symbol name:
// "github.com/a/b.(*T).M" -> "github.com/a/b", "type:*fmt.pp" -> "fmt",
// "pkg.F[go.shape.int]" -> "pkg", "go.yaml.in/yaml/v3.(*parser).parse" ->
// "go.yaml.in/yaml/v3"; names of the linker's own tables ("go:func.*")
// are "(linker)".
func symbolPackage(name string) string {
	name = strings.TrimPrefix(name, "type:")
	name = strings.TrimLeft(name, "*[]")
	if strings.HasPrefix(name, "go:") { // go:func.*, go:itab.*, go:string.*
		return "(linker)"
	}
	if i := strings.IndexAny(name, "[("); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return "(linker)"
	}
	return name[:slash+1+dot]
}

type startcostRow struct {
	module   string
	initMs   float64 // sum over its packages of the median init clock
	packages int     // packages with an init
	bytes    int64
}

func startcostRows(mods []string, inits map[string][]float64, sizes map[string]int64) []startcostRow {
	byMod := map[string]*startcostRow{}
	get := func(m string) *startcostRow {
		if byMod[m] == nil {
			byMod[m] = &startcostRow{module: m}
		}
		return byMod[m]
	}
	for pkg, ms := range inits {
		r := get(moduleOf(pkg, mods))
		r.initMs += medianOf(ms)
		r.packages++
	}
	for pkg, n := range sizes {
		m := pkg
		if !strings.HasPrefix(pkg, "(") {
			m = moduleOf(pkg, mods)
		}
		get(m).bytes += n
	}
	var rows []startcostRow
	for _, r := range byMod {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].initMs != rows[j].initMs {
			return rows[i].initMs > rows[j].initMs
		}
		if rows[i].bytes != rows[j].bytes {
			return rows[i].bytes > rows[j].bytes
		}
		return rows[i].module < rows[j].module
	})
	return rows
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// startcostReport is the Markdown section: a start's CPU, then one row per
// module with an init or at least 100 kB of symbols, the rest summed.
func startcostReport(rows []startcostRow, cpuMs float64, starts int, fileBytes int64, loadNote string) string {
	var b strings.Builder
	var initSum float64
	var symSum int64
	for _, r := range rows {
		initSum += r.initMs
		symSum += r.bytes
	}
	fmt.Fprintf(&b, "## Start-up cost by module\n\n")
	fmt.Fprintf(&b, "`rollout version`, %d starts (%s): %.1f ms CPU a start (median); package inits %.1f ms of clock "+
		"(GODEBUG=inittrace=1, the median of each package, summed). Sizes: `go tool nm -size` of the same build with "+
		"its symbol table (%.1f MB file), symbols that take room in the file, summed by module (%.1f MB; the rest is "+
		"pclntab, DWARF and the symbol table, which a stripped build keeps only in part).\n\n",
		starts, loadNote, cpuMs, initSum, float64(fileBytes)/1e6, float64(symSum)/1e6)
	b.WriteString("| module | inits | init clock (ms) | share of inits | symbols (MB) |\n|---|---:|---:|---:|---:|\n")
	var rest startcostRow
	restN := 0
	for _, r := range rows {
		if r.packages == 0 && r.bytes < 100e3 {
			rest.bytes += r.bytes
			restN++
			continue
		}
		share := 0.0
		if initSum > 0 {
			share = 100 * r.initMs / initSum
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.1f %% | %.2f |\n", r.module, r.packages, r.initMs, share, float64(r.bytes)/1e6)
	}
	if restN > 0 {
		fmt.Fprintf(&b, "| %d other modules without an init | 0 | 0.00 | 0.0 %% | %.2f |\n", restN, float64(rest.bytes)/1e6)
	}
	return b.String()
}
