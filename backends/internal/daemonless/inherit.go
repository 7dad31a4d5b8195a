package daemonless

import "context"

// AnonymousVolumes maps the target of each anonymous volume of the
// container (made or inherited for it) to its name.
func (c *Core) AnonymousVolumes(ctx context.Context, id string) (map[string]string, error) {
	st, err := c.Store().Find(ctx, id)
	if err != nil {
		return nil, err
	}
	anon := map[string]bool{}
	for _, n := range st.Anonymous {
		anon[n] = true
	}
	out := map[string]string{}
	for _, m := range st.Mounts {
		if m.Type == "volume" && anon[m.Name] {
			out[m.Destination] = m.Name
		}
	}
	return out, nil
}
