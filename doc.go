// Package parley is Parley's domain: the application error type and its kinds,
// field errors, plans, and the domain types (tenants, segments, tools, corpus
// entries, visitors, conversations, submissions) with their rules. It imports
// nothing of ours, so that db, agent, auth, jobs and handlers all speak it.
package parley
