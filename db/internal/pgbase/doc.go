// Package pgbase holds what the SQL of every store under db shares: the
// Querier of a pool or a transaction, the checks of text parameters
// (Storable, StorableKey), AsyncCommit, the partial-update builders, the
// mapping of PostgreSQL's errors, the tenant lock, the conditional writes
// of the settings-like resources (ETag, WriteIfMatch), and the column lists
// that several stores read the same rows with. It holds no store and no
// state.
package pgbase
