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
	dialer := &net.Dialer{
		Timeout: cfg.ProbeTimeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			return checkDialAddress(address, cfg.AllowPrivate)
		},
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		MaxIdleConns:           cfg.MaxConcurrency,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    cfg.ProbeTimeout,
		ResponseHeaderTimeout:  cfg.ProbeTimeout,
		MaxResponseHeaderBytes: 16 << 10,
		DisableCompression:     true,
	}
	return &prober{
		client: &http.Client{
			Transport:     transport,
			Timeout:       cfg.ProbeTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		path: cfg.HealthPath,
	}
}

func checkDialAddress(address string, allowPrivate bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrForbiddenAddress, address)
	}
	ip := ap.Addr().Unmap()
	switch {
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ip)
	case allowPrivate:
		return nil
	case ip.IsLoopback(), ip.IsPrivate(), ip.IsLinkLocalUnicast():
		return fmt.Errorf("%w: %s is internal", ErrForbiddenAddress, ip)
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
