// Package config reads the project configuration of `rollout verify`,
// `.rollout.yaml`, found from the working directory upward or named with
// --config. It only parses and validates: the command decides how flags
// override it. Unknown keys are errors naming their line and the nearest
// valid key, so that a typo never silently turns a check off. It is
// plumbing with no stage (internal/base): it imports only suggest.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-dev/rollout/internal/base/suggest"
)

// FileName is the name looked for from the working directory upward.
const FileName = ".rollout.yaml"

// Config is the content of a .rollout.yaml. Every field is optional; a
// missing one leaves the flag's default.
type Config struct {
	// Select and Ignore are --select and --ignore: rule ids or areas ("ordinal/").
	Select []string `yaml:"select"`
	Ignore []string `yaml:"ignore"`
	// PerPathIgnores maps a glob, relative to the config file's directory
	// ("archived_sessions/**", "**/rollout-2025-*.jsonl"), to the rules or
	// areas ignored in the files it matches.
	PerPathIgnores map[string][]string `yaml:"per-path-ignores"`
	FailOn         string              `yaml:"fail-on"`
	ShowSeverity   string              `yaml:"show-severity"`
	MaxLineBytes   *int64              `yaml:"max-line-bytes"`
	HandoffCap     *int64              `yaml:"handoff-cap"`
	// MaxFindingsPerRule is --max-findings-per-rule.
	MaxFindingsPerRule *int `yaml:"max-findings-per-rule"`
	// Format is the list of --format values; a FILE is relative to the
	// config file's directory.
	Format []string `yaml:"format"`
	// Baseline is --baseline, relative to the config file's directory.
	Baseline string `yaml:"baseline"`

	// Path is the file the config was read from; Dir its directory.
	Path string `yaml:"-"`
	Dir  string `yaml:"-"`
}

// Find looks for FileName in dir and its parents and returns its path, or
// "" when there is none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, FileName)
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return p, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Load reads and parses a config file.
func Load(p string) (*Config, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	c.Path, c.Dir = p, filepath.Dir(abs)
	return c, nil
}

// Parse decodes a config document. Unknown keys and values of the wrong
// type are errors with their line, naming the key as written and, for an
// unknown one, the nearest valid key ("line 3: unknown key "fail_on"; did
// you mean "fail-on"?").
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	var doc yaml.Node
	// An empty document (only comments) is an empty config.
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want keys and values (%s: ...), not %s", root.Line, keys()[0], nodeKind(root))
	}
	fields := fieldsByKey(c)
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		field, ok := fields[k.Value]
		if !ok {
			return nil, unknownKey(k)
		}
		if first, dup := seen[k.Value]; dup {
			return nil, fmt.Errorf("line %d: %s is given twice (first on line %d)", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
		if err := v.Decode(field.Addr().Interface()); err != nil {
			return nil, fmt.Errorf("line %d: %s: %s", v.Line, k.Value, wrongType(field.Type(), v))
		}
	}
	for glob := range c.PerPathIgnores {
		if _, err := path.Match(strings.ReplaceAll(glob, "**", "*"), ""); err != nil {
			return nil, fmt.Errorf("per-path-ignores: bad glob %q: %w", glob, err)
		}
	}
	return c, nil
}

// keys are the config's keys, in the order of Config.
func keys() []string {
	t := reflect.TypeFor[Config]()
	var out []string
	for i := range t.NumField() {
		if k := t.Field(i).Tag.Get("yaml"); k != "" && k != "-" {
			out = append(out, k)
		}
	}
	return out
}

// fieldsByKey maps each key to its field of c.
func fieldsByKey(c *Config) map[string]reflect.Value {
	v := reflect.ValueOf(c).Elem()
	out := map[string]reflect.Value{}
	for i := range v.NumField() {
		if k := v.Type().Field(i).Tag.Get("yaml"); k != "" && k != "-" {
			out[k] = v.Field(i)
		}
	}
	return out
}

func unknownKey(k *yaml.Node) error {
	if near := suggest.Closest(k.Value, keys(), 1); len(near) > 0 {
		return fmt.Errorf("line %d: unknown key %q; did you mean %q?", k.Line, k.Value, near[0])
	}
	return fmt.Errorf("line %d: unknown key %q (the keys are: %s)", k.Line, k.Value, strings.Join(keys(), ", "))
}

// wrongType says what a value should have been, for a field of type t.
func wrongType(t reflect.Type, v *yaml.Node) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	got := nodeKind(v)
	if v.Kind == yaml.ScalarNode {
		got = strconv.Quote(v.Value)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return got + " is not a number"
	case reflect.Slice:
		return "want a list ([a, b]), not " + got
	case reflect.Map:
		return "want globs, each with a list of rules, not " + got
	}
	return "want a single value, not " + got
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "value " + strconv.Quote(n.Value)
}

// Resolve makes a path from the config relative to its directory; an
// absolute path, or "-", stays as it is.
func (c *Config) Resolve(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) || c.Dir == "" {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// IgnoredAt returns the rules and areas that per-path-ignores turns off for
// a file. The file's path is taken relative to the config file's directory;
// a file outside it matches no glob.
func (c *Config) IgnoredAt(file string) []string {
	if len(c.PerPathIgnores) == 0 {
		return nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(c.Dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	rel = filepath.ToSlash(rel)
	var out []string
	for glob, rules := range c.PerPathIgnores {
		if matchGlob(glob, rel) {
			out = append(out, rules...)
		}
	}
	return out
}

// matchGlob matches a slash-separated path against a glob in which "**" is
// any number of whole path segments (zero included) and every other segment
// follows path.Match ("*" does not cross "/"). A glob without "/" matches
// the file name at any depth, as in .gitignore.
func matchGlob(glob, name string) bool {
	if !strings.Contains(glob, "/") {
		glob = "**/" + glob
	}
	return matchSegments(strings.Split(glob, "/"), strings.Split(name, "/"))
}

func matchSegments(glob, name []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(glob[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(glob[0], name[0]); !ok {
			return false
		}
		glob, name = glob[1:], name[1:]
	}
	return len(name) == 0
}
