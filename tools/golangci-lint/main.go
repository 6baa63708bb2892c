// Command golangci-lint is golangci-lint, pinned in go.mod, with this
// repository's own analyzers compiled in as module plugins (what
// `golangci-lint custom` would build, but from the Go module proxy alone).
// `make lint` builds it into build/tools/.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	_ "github.com/inferenced/inferenced/tools/golangci-lint/gostmt"
	_ "github.com/inferenced/inferenced/tools/golangci-lint/maprange"
)

const golangciModule = "github.com/golangci/golangci-lint/v2"

func main() {
	info := commands.BuildInfo{Version: "unknown", Commit: "?", Date: "(unknown)", GoVersion: "unknown"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.GoVersion = bi.GoVersion
		for _, dep := range bi.Deps {
			if dep.Path == golangciModule {
				info.Version = strings.TrimPrefix(dep.Version, "v")
				info.Commit = "(module " + dep.Sum + ", with the gostmt and maprange plugins)"
			}
		}
	}
	if err := commands.Execute(info); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "The command is terminated due to an error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}
