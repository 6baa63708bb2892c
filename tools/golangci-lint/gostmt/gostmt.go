// Package gostmt is a golangci-lint module plugin that reports every `go`
// statement. Consensus code must not start goroutines: their scheduling
// differs from node to node, and so would the state they touch. forbidigo
// cannot express this rule (it matches identifiers, and `go` is a keyword),
// so .golangci.yml enables this analyzer and limits it, like forbidigo, to the
// consensus packages.
package gostmt

import (
	"go/ast"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
)

// Analyzer reports go statements.
var Analyzer = &analysis.Analyzer{
	Name: "gostmt",
	Doc:  "reports go statements (no goroutines in consensus code)",
	Run:  run,
}

func run(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				pass.Reportf(g.Pos(), "go statement: consensus code must not start goroutines")
			}
			return true
		})
	}
	return nil, nil
}

func init() {
	register.Plugin("gostmt", func(any) (register.LinterPlugin, error) { return plugin{}, nil })
}

type plugin struct{}

func (plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{Analyzer}, nil
}

// The check needs only the syntax tree.
func (plugin) GetLoadMode() string { return register.LoadModeSyntax }
