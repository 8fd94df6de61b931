package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley/parley"
)

// setClause is one column of a partial update.
type setClause struct {
	column string
	value  any
}

// addSet appends o's column when the caller sent it (NULL when sent as null).
func addSet[T any](sets []setClause, column string, o parley.Opt[T]) []setClause {
	if !o.Set {
		return sets
	}
	if o.Null {
		return append(sets, setClause{column, nil})
	}
	return append(sets, setClause{column, o.Value})
}

// updateSQL builds "UPDATE table SET updated_at = now(), col = $n, ... WHERE
// <where>" with the set values appended to args. where refers to args by
// their positions ($1, $2, ...), which the set values come after.
func updateSQL(table, where string, args []any, sets []setClause) (string, []any) {
	var b strings.Builder
	b.WriteString("UPDATE " + table + " SET updated_at = now()")
	for _, c := range sets {
		args = append(args, c.value)
		fmt.Fprintf(&b, ", %s = $%d", c.column, len(args))
	}
	b.WriteString(" WHERE " + where)
	return b.String(), args
}

// updateTenantRow applies sets to the row of table with that id and tenant;
// a missing row is a not-found Error naming what.
func updateTenantRow(ctx context.Context, q Querier, table, what, tenantID, id string, sets []setClause) error {
	sql, args := updateSQL(table, "tenant_id = $1 AND id = $2", []any{tenantID, id}, sets)
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return err // callers turn constraint violations into their own errors
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	return nil
}

// deleteTenantRow deletes the row of table with that id and tenant; an id
// that is not a UUID or names no row of the tenant is a not-found Error.
func deleteTenantRow(ctx context.Context, q Querier, table, what, tenantID, id string) error {
	if !looksLikeUUID(id) {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	tag, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("deleting %s: %w", strings.ToLower(what), err)
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	return nil
}
