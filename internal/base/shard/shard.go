// Package shard splits a run over many inputs into N shards that run
// anywhere (--shard K/N) and checks, when their reports are merged, that
// they are the N shards of one run: each once, none missing. It is
// plumbing with no stage (internal/base) and imports nothing of the module.
package shard

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"
)

// Spec is --shard K/N: the inputs whose key (the root of their lineage, or
// their path) hashes to shard K of N. The JSON reports record it as
// {"k": K, "n": N}.
type Spec struct {
	K int `json:"k"`
	N int `json:"n"`
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// IndexVar is the variable a Kubernetes Indexed Job sets in each pod: its
// 0-based completion index. "index/N" takes shard K from it.
const IndexVar = "JOB_COMPLETION_INDEX"

// Parse parses "K/N" with 1 <= K <= N; K "index" is getenv(IndexVar) + 1.
func Parse(s string, getenv func(string) string) (Spec, error) {
	ks, ns, ok := strings.Cut(s, "/")
	var k, n int
	var err error
	if ok && ks == "index" {
		v := getenv(IndexVar)
		if v == "" {
			return Spec{}, fmt.Errorf("--shard %q: %s is not set (Kubernetes sets it in the pods of an Indexed Job)", s, IndexVar)
		}
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			return Spec{}, fmt.Errorf("--shard %q: %s=%q is not a completion index", s, IndexVar, v)
		}
		ks = strconv.Itoa(i + 1)
	}
	if ok {
		k, err = strconv.Atoi(ks)
		if err == nil {
			n, err = strconv.Atoi(ns)
		}
	}
	if !ok || err != nil || n < 1 || k < 1 || k > n {
		return Spec{}, fmt.Errorf("invalid --shard %q", s)
	}
	return Spec{k, n}, nil
}

// Contains reports whether key (a path as written, or a thread id) is in
// the shard: FNV-1a of the key, with "/" separators, modulo N.
func (s Spec) Contains(key string) bool {
	h := fnv.New32a()
	h.Write([]byte(filepath.ToSlash(key)))
	return int(h.Sum32()%uint32(s.N)) == s.K-1
}

// CheckSet checks that the reports named names, whose shards are specs
// (nil: a whole run), are the shards of one run: one whole run alone, or
// shards of the same N, each once, none missing (the error names them).
func CheckSet(names []string, specs []*Spec) error {
	byK := map[int]string{}
	var first *Spec
	firstName := ""
	for i, s := range specs {
		if s == nil {
			if len(specs) > 1 {
				return fmt.Errorf("%s is the report of a whole run (made without --shard): it merges with no other report", names[i])
			}
			return nil
		}
		if first == nil {
			first, firstName = s, names[i]
		}
		if s.N != first.N {
			return fmt.Errorf("%s is shard %s, %s shard %s: the shards of one run have the same N", names[i], s, firstName, first)
		}
		if prev, dup := byK[s.K]; dup {
			return fmt.Errorf("%s and %s are both shard %s: each shard merges once", prev, names[i], s)
		}
		byK[s.K] = names[i]
	}
	if first == nil {
		return nil
	}
	var missing []string
	for k := 1; k <= first.N; k++ {
		if _, ok := byK[k]; !ok {
			missing = append(missing, strconv.Itoa(k))
		}
	}
	if len(missing) > 0 {
		what := "shard " + missing[0]
		if len(missing) > 1 {
			what = "shards " + strings.Join(missing, ", ")
		}
		return fmt.Errorf("%s of %d missing: the merge of an incomplete run would not be the run's report", what, first.N)
	}
	return nil
}
