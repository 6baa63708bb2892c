package routes

// The cache of values derived from one committed block, for the query path
// only. The committed state of a height never changes, so a value computed
// from it and keyed by that height can never be stale. It holds at most a
// fixed number of heights and prefers the highest ones, so queries at old
// heights cannot evict the tip.

import (
	"errors"
	"sync"
)

// errNotKept: the key is below every height kept while the cache is full,
// so nothing is built for it; the caller answers another way.
var errNotKept = errors.New("height not kept")

// heightKey names one committed height.
type heightKey struct {
	Height int64
}

// cache maps a heightKey to a value built once for it. It is safe for concurrent
// use: callers asking for a key being built wait for that build.
type cache[V any] struct {
	mu    sync.Mutex
	max   int
	slots []*slot[V]
}

type slot[V any] struct {
	key  heightKey
	done chan struct{}
	val  V
	ok   bool
	err  error // the build's failure, given to its waiters
}

// New returns a cache of at most maxKeys values (at least one).
func newCache[V any](maxKeys int) *cache[V] {
	return &cache[V]{max: max(maxKeys, 1)}
}

// Get returns the value kept for key, or builds it. build is given the
// value of the highest height already built, if any, to
// reuse what it can; what it takes from it must be checked against the new
// height's state. A build that fails (error or panic) is not kept, and its
// failure is what the callers waiting on it get (each then answers its own
// way, at once, instead of building again one after another). When the
// cache is full and key is below every height kept, nothing is built:
// errNotKept.
func (c *cache[V]) Get(key heightKey, build func(base V, ok bool) (V, error)) (V, error) {
	c.mu.Lock()
	if s := c.find(key); s != nil {
		c.mu.Unlock()
		<-s.done
		if s.ok {
			return s.val, nil
		}
		var zero V
		return zero, s.err
	}
	base, ok := c.highestBuilt()
	s := &slot[V]{key: key, done: make(chan struct{}), err: errBuildPanicked}
	kept := c.insert(s)
	c.mu.Unlock()
	if !kept {
		var zero V
		return zero, errNotKept
	}
	return c.fill(s, func() (V, error) { return build(base, ok) })
}

// errBuildPanicked is what waiters get when the build they wait on panicked.
var errBuildPanicked = errors.New("route table build panicked")

// Latest is the value of the highest height built well, if any.
func (c *cache[V]) Latest() (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.highestBuilt()
}

// Len is the number of values kept or being built.
func (c *cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.slots)
}

func (c *cache[V]) fill(s *slot[V], build func() (V, error)) (V, error) {
	defer func() {
		if !s.ok {
			c.mu.Lock()
			c.remove(s)
			c.mu.Unlock()
		}
		close(s.done)
	}()
	v, err := build()
	if err != nil {
		s.err = err
		return v, err
	}
	s.val, s.ok, s.err = v, true, nil
	return v, nil
}

// highestBuilt is the value of the highest height whose build has
// finished well; the closed channel orders its writes before this read.
func (c *cache[V]) highestBuilt() (V, bool) {
	var best *slot[V]
	for _, s := range c.slots {
		select {
		case <-s.done:
			if s.ok && (best == nil || s.key.Height > best.key.Height) {
				best = s
			}
		default:
		}
	}
	if best == nil {
		var zero V
		return zero, false
	}
	return best.val, true
}

func (c *cache[V]) find(key heightKey) *slot[V] {
	for _, s := range c.slots {
		if s.key == key {
			return s
		}
	}
	return nil
}

// insert adds s, evicting the lowest height when full; it refuses s when
// full and s is not above that lowest height.
func (c *cache[V]) insert(s *slot[V]) bool {
	if len(c.slots) >= c.max {
		lowest := 0
		for i, o := range c.slots {
			if o.key.Height < c.slots[lowest].key.Height {
				lowest = i
			}
		}
		if s.key.Height <= c.slots[lowest].key.Height {
			return false
		}
		c.slots = append(c.slots[:lowest], c.slots[lowest+1:]...)
	}
	c.slots = append(c.slots, s)
	return true
}

func (c *cache[V]) remove(s *slot[V]) {
	for i, o := range c.slots {
		if o == s {
			c.slots = append(c.slots[:i], c.slots[i+1:]...)
			return
		}
	}
}

// memo holds values computed at most once per key (up to a bound), safe for
// concurrent use. Two callers racing on a new key may both compute it; the
// first result stored is the one every later caller gets, so compute must
// be a pure function of the key.
type memo[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

// NewMemo returns a memo of at most maxKeys values; keys beyond it are
// computed on every call.
func newMemo[K comparable, V any](maxKeys int) *memo[K, V] {
	return &memo[K, V]{max: maxKeys, m: make(map[K]V)}
}

// Get returns the value for key, computing it if absent. An error is
// returned and not kept.
func (m *memo[K, V]) Get(key K, compute func() (V, error)) (V, error) {
	m.mu.Lock()
	v, ok := m.m[key]
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := compute()
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if kept, ok := m.m[key]; ok {
		return kept, nil
	}
	if len(m.m) < m.max {
		m.m[key] = v
	}
	return v, nil
}

// Keys lists the keys of the values kept, in no particular order.
func (m *memo[K, V]) Keys() []K {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]K, 0, len(m.m))
	for k := range m.m {
		out = append(out, k)
	}
	return out
}

// Clear drops every value kept; builds under way finish for their callers.
func (c *cache[V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slots = nil
}
