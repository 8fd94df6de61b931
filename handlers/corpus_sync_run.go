package handlers

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/fetch"
	"github.com/parley/parley/db/knowledge"
)

// A URL's sync into the knowledge base, which the REST API and the
// dashboard's "Add from URL" share.

// SyncURL validates a sync request (errs holds decoding problems already),
// fetches and converts the page, and creates or refreshes the tenant's entry
// for that URL. The API and the dashboard's "Add from URL" share it.
func (h *Base) SyncURL(ctx context.Context, log *slog.Logger, t parley.Tenant, target parley.Opt[string], in parley.CorpusInput, errs parley.FieldErrors) (parley.CorpusEntry, knowledge.UpsertResult, error) {
	rawURL := strings.TrimSpace(target.Value)
	switch {
	case errs["url"] != "":
	case !target.Set || target.Null || rawURL == "":
		errs.Add("url", "is required")
	case utf8.RuneCountInString(rawURL) > parley.MaxCorpusSourceURL:
		errs.Add("url", parley.TooLong(parley.MaxCorpusSourceURL))
	default:
		u, err := url.Parse(rawURL)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
			errs.Add("url", "must be an absolute http or https URL such as https://example.com/faq")
		case u.User != nil:
			errs.Add("url", "must not contain a user name or password")
		}
	}
	in.Content, in.ExternalID, in.Source, in.SourceURL = parley.Opt[string]{}, parley.Opt[string]{}, parley.Opt[string]{}, parley.Opt[string]{}
	w, verrs := h.Manage.CheckCorpusOne(ctx, t.ID, in, false)
	for k, v := range verrs {
		errs.Add(k, v)
	}
	if err := errs.Err(); err != nil {
		return parley.CorpusEntry{}, 0, err
	}

	existing, err := h.DB.CorpusEntryBySourceURL(ctx, t.ID, rawURL)
	found := err == nil
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return parley.CorpusEntry{}, 0, err
	}
	limit := t.PlanInfo().CorpusLimit
	if !found {
		// Refuse before fetching; DB.SyncCorpus checks again under the tenant lock.
		n, err := h.DB.CountCorpus(ctx, t.ID)
		if err != nil {
			return parley.CorpusEntry{}, 0, err
		}
		if n >= limit {
			return parley.CorpusEntry{}, 0, knowledge.CorpusLimitError(n, limit)
		}
	}

	doc, err := fetch.Document(ctx, h.Outbound.Client(fetch.Timeout), rawURL, "", "")
	if err != nil {
		if found && existing.SyncedAt != nil {
			if rerr := h.DB.RecordCorpusSyncError(ctx, t.ID, existing.ID, err.Error(), h.Clock()); rerr != nil && parley.ErrorKind(rerr) != parley.KindNotFound {
				log.Error("recording corpus sync error", "err", rerr, "entry", existing.ID)
			}
		}
		return parley.CorpusEntry{}, 0, err
	}
	return h.DB.SyncCorpus(ctx, t.ID, limit, rawURL, w, knowledge.CorpusSync{
		Title: doc.Title, Content: doc.Content, ETag: doc.ETag, LastModified: doc.LastModified, At: h.Clock()})
}
