package gostmt_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/inferenced/inferenced/tools/golangci-lint/gostmt"
)

// TestGoStatements checks that every go statement is reported, in a function,
// in a closure and in a method, and that a call that merely has "go" in its
// name is not (testdata/src/a/a.go marks each expected report with // want).
func TestGoStatements(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), gostmt.Analyzer, "a")
}
