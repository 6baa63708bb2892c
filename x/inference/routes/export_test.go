package routes

import "slices"

// Forget drops every table kept (a test that reads state within a block,
// which no node's query does, starts each draw afresh).
func (r *Routes) Forget() { r.tables.Clear() }

// Kept is how many committed heights a table is kept for (a table that
// failed to build is not kept).
func (r *Routes) Kept() int { return r.tables.Len() }

// Ready reports whether the route of model at committed is built already
// (by a query or by Warm), without building it.
func (r *Routes) Ready(committed int64, model string) bool {
	t, ok := r.tables.peek(heightKey{Height: committed})
	if !ok {
		return false
	}
	return slices.Contains(t.routes.Keys(), model)
}

// WarmQueriedWithin is warmQueriedWithin, for tests.
const WarmQueriedWithin = warmQueriedWithin

// peek is the value built for key, if it is kept and built well; it never
// builds nor waits.
func (c *cache[V]) peek(key heightKey) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.find(key); s != nil {
		select {
		case <-s.done:
			if s.ok {
				return s.val, true
			}
		default:
		}
	}
	var zero V
	return zero, false
}
