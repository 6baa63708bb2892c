package localnet

import (
	"time"

	"github.com/inferenced/inferenced/appmetrics"
	"github.com/inferenced/inferenced/monitor"
)

// ProbeMetrics are the app metrics counting the health monitor's probes,
// as the node's Prometheus endpoint names them (appmetrics.Name).
var ProbeMetrics = []string{appmetrics.Name(monitor.MetricKey(monitor.MetricProbesOK)), appmetrics.Name(monitor.MetricKey(monitor.MetricProbesMiss))}

// Window measures what a network's processes use between StartWindow and
// End: CPU per validator and of the executor fleet, and the monitors'
// probes.
type Window struct {
	n      *Net
	begin  time.Time
	cpu    []time.Duration // per validator
	fleet  time.Duration
	probes []float64 // per validator
}

// Usage is a window's figures.
type Usage struct {
	Wall time.Duration
	// ValidatorCPU is each validator's CPU time over the wall time (1: one
	// core); FleetCPU the executor fleet's (0 without a fleet).
	ValidatorCPU []float64
	FleetCPU     float64
	// ProbesPerSecond is each validator's probes per second (ProbeMetrics).
	ProbesPerSecond []float64
}

// StartWindow begins a measurement window.
func (n *Net) StartWindow() *Window {
	n.t.Helper()
	w := &Window{n: n, begin: time.Now()}
	w.cpu, w.fleet, w.probes = w.read()
	return w
}

// End ends the window and returns its figures.
func (w *Window) End() Usage {
	w.n.t.Helper()
	cpu, fleet, probes := w.read()
	u := Usage{Wall: time.Since(w.begin)}
	secs := u.Wall.Seconds()
	for i := range cpu {
		u.ValidatorCPU = append(u.ValidatorCPU, (cpu[i]-w.cpu[i]).Seconds()/secs)
		u.ProbesPerSecond = append(u.ProbesPerSecond, (probes[i]-w.probes[i])/secs)
	}
	u.FleetCPU = (fleet - w.fleet).Seconds() / secs
	return u
}

func (w *Window) read() (cpu []time.Duration, fleet time.Duration, probes []float64) {
	n := w.n
	n.t.Helper()
	for i := range n.cfg.validators() {
		cpu = append(cpu, n.ValidatorCPU(i))
		m, err := n.NodeMetrics(i)
		if err != nil {
			n.t.Fatalf("validator %d's app metrics: %v", i, err)
		}
		var p float64
		for _, name := range ProbeMetrics {
			p += m.Sum(name)
		}
		probes = append(probes, p)
	}
	if n.Fleet() {
		fleet = n.CPU("executors")
	}
	return cpu, fleet, probes
}
