package client

import (
	"crypto/tls"
	"crypto/x509"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cornus-dev/cornus/internal/boundedfile"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/progress"
	"github.com/cornus-dev/cornus/server/api"
)

// Client is one server and the token to use with it.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
	// Progress receives the engine events of streamed verbs.
	Progress progress.Writer
	// Warn receives the server's warnings about a spec.
	Warn func(string)
	// BuildLine receives a build's progress lines (nil: dropped).
	BuildLine func(json.RawMessage)
}

// New returns a client of the server at rawURL (http or https).
func New(rawURL, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http(s)://HOST[:PORT]", rawURL)
	}
	if token == "" {
		return nil, fmt.Errorf("no token for %s: run cornus login %s, or set CORNUS_TOKEN", u, u)
	}
	return &Client{base: u, token: token, http: &http.Client{}, Progress: progress.Discard, Warn: func(string) {}}, nil
}

// URL is the server's address.
func (c *Client) URL() string { return c.base.String() }

func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()
	return u.String()
}

// bearer is the header of an upgrade's dial that authenticates with the
// client's token (do sets it on its request).
func (c *Client) bearer() http.Header { return http.Header{"Authorization": {"Bearer " + c.token}} }

// unreachable is err, a failure to reach the server, as callers see it.
func (c *Client) unreachable(err error) error {
	return fmt.Errorf("server %s unreachable: %w", c.base, errors.Join(err, errdefs.ErrUnavailable))
}

// do sends a request and returns the response of a 2xx answer; any other
// answer becomes the error it carries.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body io.Reader, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, q), body)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.unreachable(err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	return resp, nil
}

func readError(resp *http.Response) error {
	var e api.Error
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(data, &e) != nil || e.Message == "" {
		e.Message = fmt.Sprintf("server answered %s", resp.Status)
	}
	return e.Err()
}

// call sends a JSON body (nil: none) and decodes a JSON answer into out
// (nil: ignored).
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	resp, err := c.do(ctx, method, path, q, body, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(out)
}

// stream sends a JSON body and reads NDJSON frames: progress to
// c.Progress, warnings to c.Warn, then the result into out.
func (c *Client) stream(ctx context.Context, path string, hdr http.Header, in, out any) (http.Header, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodPost, path, nil, bytes.NewReader(b), hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var f api.Frame
		if err := dec.Decode(&f); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("server %s: the answer ended early: %w", c.base, errors.Join(err, errdefs.ErrUnavailable))
		}
		switch {
		case f.Progress != nil:
			c.Progress.Event(*f.Progress)
		case f.Warning != "":
			c.Warn(f.Warning)
		case f.Build != nil:
			if c.BuildLine != nil {
				c.BuildLine(f.Build)
			}
		case f.Error != nil:
			return resp.Header, f.Error.Err()
		default:
			if out != nil && f.Result != nil {
				raw, _ := json.Marshal(f.Result)
				if err := json.Unmarshal(raw, out); err != nil {
					return nil, err
				}
			}
			return resp.Header, nil
		}
	}
}

// Info asks the server who it is and who we are.
func (c *Client) Info(ctx context.Context) (api.Info, error) {
	var i api.Info
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := c.call(ctx, http.MethodGet, api.Version+"/info", nil, nil, &i)
	return i, err
}

func decode(resp *http.Response, v any) error {
	return json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(v)
}

// TrustCA makes the client trust the CA certificates in pemFile (a
// server with a self-signed or private certificate) besides the system's.
func (c *Client) TrustCA(pemFile string) error {
	data, err := boundedfile.Read(pemFile, boundedfile.ServerState)
	if err != nil {
		return err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%s: no PEM certificate in it", pemFile)
	}
	c.http = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return nil
}
