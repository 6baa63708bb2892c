package proposals

import (
	"github.com/inferenced/inferenced/abci/ve"
	"github.com/inferenced/inferenced/appmetrics"
)

// This package's series (appmetrics: each exists at zero from the start).
var (
	seriesBundleSize       = appmetrics.NewGauge(ve.MetricKey("bundle_size_bytes"), "size of the last health bundle this node proposed or checked")
	seriesPrunedExtensions = appmetrics.NewCounter(ve.MetricKey("pruned_extensions"), "invalid vote extensions this proposer pruned from its last commit")
	seriesEmptyBundles     = appmetrics.NewCounter(ve.MetricKey("empty_bundles"), "proposals checked whose health bundle was empty (attestations withheld)")
	seriesVotesAttested    = appmetrics.NewGauge(ve.MetricKey("bundle_votes", "attested"), "votes with verdicts in the last bundle proposed or checked")
	seriesVotesAbstained   = appmetrics.NewGauge(ve.MetricKey("bundle_votes", "abstained"), "abstaining votes in the last bundle proposed or checked")
)
