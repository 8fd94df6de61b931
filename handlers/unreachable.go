package handlers

// The answer to a request that met the database unreachable
// (db.Unreachable: a restart, a failover, no connection to be had): 503 with
// Retry-After, or, once a chat's stream has begun, its error event with the
// same words and code. Two seconds covers a restart of PostgreSQL or a
// standby's promotion in most cases; a client that meets it again waits
// again (README, "Retrying requests").
const (
	UnreachableCode         = "TEMPORARILY_UNAVAILABLE"
	UnreachableMessage      = "The service is briefly unavailable; try again in a few seconds."
	UnreachableRetrySeconds = 2
)
