package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// maxBody bounds what is read of a health response; the rest is dropped.
const maxBody = 4 << 10

// maxIdleConns bounds the kept-alive connections: one per executor host
// that answers, so that probing 10,000 executors reuses connections
// instead of dialling each time, and no more (each is a file descriptor).
const maxIdleConns = 16384

// ErrForbiddenAddress is returned for a target the monitor must not probe.
var ErrForbiddenAddress = errors.New("address not allowed for probing")

// prober sends one GET to an executor's health path. It never follows
// redirects, uses no proxy, bounds time and body, and refuses loopback,
// private, link-local and other special addresses unless allowed; the check
// runs on the address actually dialled, after DNS, so a name that resolves
// to an internal address is refused too.
type prober struct {
	client *http.Client
	path   string
}

func newProber(cfg Config) *prober {
	// The pool holds at most one connection per host that answered (two
	// when executors share a host), so about min(healthy members,
	// maxIdleConns); a probe that times out closes its own. Connections are
	// kept between two probes of the same executor.
	transport := newTransport(cfg.ProbeTimeout, max(30*time.Second, 2*cfg.ProbeInterval+cfg.ProbeTimeout), cfg.AllowPrivate)
	transport.DisableCompression = true
	return &prober{
		client: &http.Client{
			Transport:     transport,
			Timeout:       cfg.ProbeTimeout,
			CheckRedirect: noRedirects,
		},
		path: cfg.HealthPath,
	}
}

// noRedirects makes a client return a redirect as the answer: a miss.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// newTransport is the transport of the monitor's requests to participant
// URLs: no proxy, every dialled address checked (checkDialAddress), each
// step bounded by timeout, headers by 16 KiB, idle connections closed
// after idle.
func newTransport(timeout, idle time.Duration, allowPrivate bool) *http.Transport {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			return checkDialAddress(address, allowPrivate)
		},
	}
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        idle,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 16 << 10,
	}
}

// internal are ranges that are not the public internet beyond what netip
// classifies: shared carrier NAT (where some clouds keep their metadata
// service), "this network", benchmarking, reserved and broadcast, the IETF
// protocol block, deprecated site-local IPv6.
var internal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fec0::/10"),
}

// embeddedIPv4 returns the IPv4 address that an IPv6 translation or
// tunnelling address carries (NAT64, 6to4, IPv4-compatible), if any.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(ip), netip.MustParsePrefix("::/96").Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case netip.MustParsePrefix("64:ff9b:1::/48").Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case netip.MustParsePrefix("2002::/16").Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

func checkDialAddress(address string, allowPrivate bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrForbiddenAddress, address)
	}
	return checkIP(ap.Addr().Unmap(), allowPrivate)
}

func checkIP(ip netip.Addr, allowPrivate bool) error {
	switch {
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ip)
	case allowPrivate:
		return nil
	case ip.IsLoopback(), ip.IsPrivate(), ip.IsLinkLocalUnicast():
		return fmt.Errorf("%w: %s is internal", ErrForbiddenAddress, ip)
	}
	for _, p := range internal {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is internal", ErrForbiddenAddress, ip)
		}
	}
	if v4, ok := embeddedIPv4(ip); ok {
		return checkIP(v4, allowPrivate)
	}
	return nil
}

// healthURL is the health path on the host of an executor's inference URL.
func (p *prober) healthURL(inferenceURL string) (string, error) {
	u, err := url.Parse(inferenceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("unusable inference url %q", inferenceURL)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: p.path}).String(), nil
}

// probe reports whether the executor answered 200 in time.
func (p *prober) probe(ctx context.Context, inferenceURL string) (bool, error) {
	target, err := p.healthURL(inferenceURL)
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, err
	}
	res, err := p.client.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxBody))
	if res.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %s", res.Status)
	}
	return true, nil
}
