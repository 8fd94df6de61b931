// Package clustertest proves, in make test, that Parley runs as several
// instances behind a load balancer on a database that fails over (issue 39,
// README "Running more than one instance" and "Database failover"): its
// test builds the parley binary, starts a PostgreSQL primary with a
// synchronous streaming standby, two `parley serve` behind HAProxy (the
// configuration rendered from deploy/haproxy's template, as make cluster
// does), chats through HAProxy, kills one instance with SIGKILL, then
// crashes the primary and promotes the standby, and checks what a client
// and the database saw. The package has no code of its own beyond this
// comment; make cluster (scripts/cluster.sh) is the same set-up by hand.
package clustertest
