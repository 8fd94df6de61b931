package parley

import "time"

// Product is an item of the catalog RECOMMEND_PRODUCT searches.
type Product struct {
	ID          string    `db:"id"`
	TenantID    string    `db:"tenant_id"`
	ExternalID  *string   `db:"external_id"`
	Name        string    `db:"name"`
	Description *string   `db:"description"`
	Price       *float64  `db:"price"`
	Currency    *string   `db:"currency"`
	URL         *string   `db:"url"`
	ImageURL    *string   `db:"image_url"`
	Tags        []string  `db:"tags"`
	IsActive    bool      `db:"is_active"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}
