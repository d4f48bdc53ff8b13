// Package duckcheck holds only a test: DuckDB reads the Parquet tables
// `rollout verify --format parquet=DIR` writes, as they are, and counts
// what the JSON report of the same run counts. DuckDB (github.com/duckdb/
// duckdb-go, cgo) is a dependency of this test alone, kept out of the
// packages every `go test` builds often and out of the shipped binary (the
// test checks `go version -m`). Without cgo, or where the DuckDB library
// cannot be built or loaded, the test skips and says why.
package duckcheck
