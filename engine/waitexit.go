package engine

import (
	"context"
	"errors"
	"fmt"
)

// WaitExit blocks until a container of the selected services exits
// (compose wait) and returns its exit code: the first to exit.
func (e *Engine) WaitExit(ctx context.Context, project string, services []string) (int, error) {
	cs, err := e.selected(ctx, project, services, true)
	if err != nil {
		return -1, err
	}
	if len(cs) == 0 {
		return -1, fmt.Errorf("wait: project %s has no containers of %v: is it up?", project, services)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type exit struct {
		code int
		err  error
	}
	exits := make(chan exit, len(cs))
	for _, c := range cs {
		go func() {
			code, err := e.b.Wait(ctx, c.ID)
			if err != nil {
				err = fmt.Errorf("wait for %s: %w", c.Name, err)
			}
			exits <- exit{code, err}
		}()
	}
	var errs []error
	for range cs {
		x := <-exits
		if x.err == nil {
			return x.code, nil
		}
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		errs = append(errs, x.err)
	}
	return -1, errors.Join(errs...)
}
