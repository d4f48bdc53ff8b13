package budget

import (
	"fmt"
	"strconv"
	"strings"
)

// The settings as command-line values (pflag.Value: Set, String, Type), so
// that every front end parses token counts, windows and thresholds alike.

// TokenCount is a token count of 0 or more (ParseTokens).
type TokenCount int64

func (c *TokenCount) String() string { return strconv.FormatInt(int64(*c), 10) }
func (c *TokenCount) Type() string   { return "tokens" }
func (c *TokenCount) Set(s string) error {
	v, err := ParseTokens(s)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid token count %q", s)
	}
	*c = TokenCount(v)
	return nil
}

// OptionalTokens is a TokenCount that knows whether it was given.
type OptionalTokens struct {
	v     int64
	given bool
}

// Get is the count and whether it was given.
func (o *OptionalTokens) Get() (int64, bool) { return o.v, o.given }

func (o *OptionalTokens) String() string {
	if !o.given {
		return ""
	}
	return strconv.FormatInt(o.v, 10)
}
func (o *OptionalTokens) Type() string { return "tokens" }
func (o *OptionalTokens) Set(s string) error {
	var c TokenCount
	if err := c.Set(s); err != nil {
		return err
	}
	o.v, o.given = int64(c), true
	return nil
}

// WindowList collects windows from comma lists (ParseWindows) and
// repeated values.
type WindowList []int64

func (l *WindowList) String() string {
	parts := make([]string, len(*l))
	for i, w := range *l {
		parts[i] = strconv.FormatInt(w, 10)
	}
	return strings.Join(parts, ",")
}
func (l *WindowList) Type() string { return "tokens" }
func (l *WindowList) Set(s string) error {
	ws, err := ParseWindows(s)
	*l = append(*l, ws...)
	return err
}

// ThresholdValue is a Threshold as --compact-at takes it (ParseThreshold).
type ThresholdValue Threshold

func (t *ThresholdValue) String() string { return Threshold(*t).String() }
func (t *ThresholdValue) Type() string   { return "N|P%" }
func (t *ThresholdValue) Set(s string) error {
	v, err := ParseThreshold(s)
	if err != nil {
		return err
	}
	*t = ThresholdValue(v)
	return nil
}
