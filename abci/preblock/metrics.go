package preblock

import (
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/appmetrics"
)

// This package's series (appmetrics: each exists at zero from the start).
var (
	seriesSamplesOK   = appmetrics.NewCounter(ve.MetricKey("samples", "ok"), "attested ok samples applied in decided blocks")
	seriesSamplesMiss = appmetrics.NewCounter(ve.MetricKey("samples", "miss"), "attested miss samples applied in decided blocks")
)
