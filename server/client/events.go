package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/containerd/errdefs"

	"github.com/cornus-dev/cornus/backends"
	"github.com/cornus-dev/cornus/engine"
	"github.com/cornus-dev/cornus/server/api"
)

// Events calls fn with each container event of the project's selected
// services on the server, as they happen, until ctx ends.
func (p *Projects) Events(ctx context.Context, project string, o engine.EventsOptions, fn func(backends.Event)) error {
	q := url.Values{"project": {project}}
	for k, t := range map[string]time.Time{"since": o.Since, "until": o.Until} {
		if !t.IsZero() {
			q.Set(k, t.Format(time.RFC3339Nano))
		}
	}
	resp, err := p.do(ctx, http.MethodGet, api.Version+"/events", q, nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var f struct {
			Result *backends.Event `json:"result"`
			Error  *api.Error      `json:"error"`
		}
		if err := dec.Decode(&f); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("server %s: the events ended early: %w", p.base, errors.Join(err, errdefs.ErrUnavailable))
		}
		switch {
		case f.Error != nil:
			return f.Error.Err()
		case f.Result != nil && engine.ServiceEvent(*f.Result, o.Services):
			fn(*f.Result)
		}
	}
}
