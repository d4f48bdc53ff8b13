package deps
import (
 _ "github.com/spf13/cobra"
 _ "github.com/tidwall/gjson"
 _ "github.com/tidwall/sjson"
 _ "github.com/evanphx/json-patch/v5"
 _ "github.com/google/go-cmp/cmp"
 _ "github.com/google/uuid"
 _ "github.com/klauspost/compress/zstd"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "gonum.org/v1/plot"
 _ "golang.org/x/term"
)
