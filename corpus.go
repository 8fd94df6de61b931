package parley

import (
	"strings"
	"time"
)

// CorpusEntry is one knowledge-base entry. SegmentSlug/SegmentName are empty
// for an entry that applies to every segment.
type CorpusEntry struct {
	ID               string     `db:"id"`
	TenantID         string     `db:"tenant_id"`
	SegmentID        *string    `db:"segment_id"`
	SegmentSlug      *string    `db:"segment_slug"`
	SegmentName      *string    `db:"segment_name"`
	Title            string     `db:"title"`
	Content          string     `db:"content"`
	Summary          *string    `db:"summary"`
	Priority         int        `db:"priority"`
	IsActive         bool       `db:"is_active"`
	ExternalID       *string    `db:"external_id"`
	Source           *string    `db:"source"`
	SourceURL        *string    `db:"source_url"`
	Locale           *string    `db:"locale"`
	Tags             []string   `db:"tags"`
	SyncETag         *string    `db:"sync_etag"`
	SyncLastModified *string    `db:"sync_last_modified"`
	SyncedAt         *time.Time `db:"synced_at"`
	SyncError        *string    `db:"sync_error"`
	SyncErrorAt      *time.Time `db:"sync_error_at"`
	CreatedAt        time.Time  `db:"created_at"`
	UpdatedAt        time.Time  `db:"updated_at"`
}

// LocaleLanguage is the language part of a locale, lower case: "fr" of
// "fr-CA", "FR_ca" or " fr "; "" for none. Entries and visitors of one
// language are matched on it (the prompt's candidates in the database,
// the turn's ranking in the engine).
func LocaleLanguage(locale string) string {
	lang, _, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(locale)), "_", "-"), "-")
	return lang
}
