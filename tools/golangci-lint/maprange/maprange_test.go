package maprange_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/inferenced/inferenced/tools/golangci-lint/maprange"
)

// TestMapRanges checks that a range over a map is reported, also through a
// named map type and over a map-valued call, and that ranges over slices,
// strings, channels, integers and sorted keys are not
// (testdata/src/a/a.go marks each expected report with // want).
func TestMapRanges(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), maprange.Analyzer, "a")
}
