// Package maprange is a golangci-lint module plugin that reports every
// `range` over a map. Go randomises map iteration order, so consensus code
// that walks a map can emit events, write state or break ties in a different
// order on every node: such code keeps a slice, or sorts the keys
// (slices.Sorted(maps.Keys(m))), and uses its maps only for look-ups. Like gostmt, .golangci.yml applies it to the
// consensus packages only.
package maprange

import (
	"go/ast"
	"go/types"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
)

// Analyzer reports range statements over maps.
var Analyzer = &analysis.Analyzer{
	Name: "maprange",
	Doc:  "reports range over a map (map iteration order differs from node to node)",
	Run:  run,
}

func run(pass *analysis.Pass) (any, error) {
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			r, ok := n.(*ast.RangeStmt)
			if !ok {
				return true
			}
			if t := pass.TypesInfo.TypeOf(r.X); t != nil {
				if _, isMap := t.Underlying().(*types.Map); isMap {
					pass.Reportf(r.Pos(), "range over a map: iteration order differs from node to node; sort the keys (slices.Sorted(maps.Keys(m))) or keep a slice")
				}
			}
			return true
		})
	}
	return nil, nil
}

func init() {
	register.Plugin("maprange", func(any) (register.LinterPlugin, error) { return plugin{}, nil })
}

type plugin struct{}

func (plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	return []*analysis.Analyzer{Analyzer}, nil
}

// The check needs the types of range expressions.
func (plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
