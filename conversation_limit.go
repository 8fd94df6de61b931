package parley

import "time"

// LimitDetails is the details payload of a LIMIT_REACHED error: the
// tenant's conversations this month, its monthly limit, and when the count
// starts again (the next month, UTC).
type LimitDetails struct {
	Current     int       `json:"current"`
	Limit       int       `json:"limit"`
	NextResetAt time.Time `json:"nextResetAt"`
}
