package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// tags serves /v2/NAME/tags/list, paginated by ?n= and ?last=.
func (h *Handler) tags(q *request) {
	if q.r.Method != http.MethodGet {
		methodNotAllowed(q.w)
		return
	}
	if !h.authorize(q, Pull) {
		return
	}
	tags, err := h.cfg.Store.Tags(q.r.Context(), q.repo)
	if failed(q.w, err, codeNameUnknown, "repository "+q.repo+" not found") {
		return
	}
	page, next, ok := paginate(q.w, q.r, tags)
	if !ok {
		return
	}
	if next != "" {
		setNext(q.w, "/v2/"+q.repo+"/tags/list", q.r, next)
	}
	writeJSON(q.w, map[string]any{"name": q.repo, "tags": page})
}

// catalog serves /v2/_catalog: the repositories principal sees.
func (h *Handler) catalog(w http.ResponseWriter, r *http.Request, principal string) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w)
		return
	}
	all, err := h.cfg.Store.Repositories(r.Context())
	if err != nil {
		serverError(w, err)
		return
	}
	repos := slices.DeleteFunc(all, func(repo string) bool { return !h.cfg.Auth.Visible(r.Context(), principal, repo) })
	page, next, ok := paginate(w, r, repos)
	if !ok {
		return
	}
	if next != "" {
		setNext(w, "/v2/_catalog", r, next)
	}
	writeJSON(w, map[string]any{"repositories": page})
}

// paginate cuts a sorted list after ?last= to ?n= entries; next is the
// last entry given when more follow.
func paginate(w http.ResponseWriter, r *http.Request, all []string) (page []string, next string, ok bool) {
	slices.Sort(all)
	q := r.URL.Query()
	if last := q.Get("last"); last != "" {
		i, _ := slices.BinarySearch(all, last)
		if i < len(all) && all[i] == last {
			i++
		}
		all = all[i:]
	}
	page = all
	if ns := q.Get("n"); ns != "" {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, codeUnsupported, fmt.Sprintf("n=%q is not a count", ns))
			return nil, "", false
		}
		if n < len(all) {
			page = all[:n]
			if n > 0 {
				next = page[n-1]
			}
		}
	}
	if page == nil {
		page = []string{}
	}
	return page, next, true
}

func setNext(w http.ResponseWriter, path string, r *http.Request, last string) {
	v := url.Values{"n": {r.URL.Query().Get("n")}, "last": {last}}
	w.Header().Set("Link", fmt.Sprintf(`<%s?%s>; rel="next"`, path, v.Encode()))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
