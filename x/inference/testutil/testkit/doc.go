// Package testkit holds the small helpers tests in every x/inference
// package share, importing nothing of the keeper (so the pure packages'
// own tests can use them too): the breaker tests' params, RequireNear for
// draw counts, PackAttested for a block's attested samples.
package testkit
