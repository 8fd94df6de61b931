package pgbase

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley/parley"
)

// SetClause is one column of a partial update.
type SetClause struct {
	Column string
	Value  any
}

// AddSet appends o's column when the caller sent it (NULL when sent as null).
func AddSet[T any](sets []SetClause, column string, o parley.Opt[T]) []SetClause {
	if !o.Set {
		return sets
	}
	if o.Null {
		return append(sets, SetClause{Column: column})
	}
	return append(sets, SetClause{Column: column, Value: o.Value})
}

// AddListSet appends o's column when the caller sent it: a list column that
// is never NULL, so null and a nil list write an empty list.
func AddListSet(sets []SetClause, column string, o parley.Opt[[]string]) []SetClause {
	if !o.Set {
		return sets
	}
	list := o.Value
	if list == nil {
		list = []string{}
	}
	return append(sets, SetClause{Column: column, Value: list})
}

// UpdateSQL builds "UPDATE table SET updated_at = now(), col = $n, ... WHERE
// <where>" with the set values appended to args. where refers to args by
// their positions ($1, $2, ...), which the set values come after.
func UpdateSQL(table, where string, args []any, sets []SetClause) (string, []any) {
	var b strings.Builder
	b.WriteString("UPDATE " + table + " SET updated_at = now()")
	for _, c := range sets {
		args = append(args, c.Value)
		fmt.Fprintf(&b, ", %s = $%d", c.Column, len(args))
	}
	b.WriteString(" WHERE " + where)
	return b.String(), args
}

// UpdateTenantRow applies sets to the row of table with that id and tenant;
// a missing row is a not-found Error naming what.
func UpdateTenantRow(ctx context.Context, q Querier, table, what, tenantID, id string, sets []SetClause) error {
	sql, args := UpdateSQL(table, "tenant_id = $1 AND id = $2", []any{tenantID, id}, sets)
	tag, err := q.Exec(ctx, sql, args...)
	if err != nil {
		return err // callers turn constraint violations into their own errors
	}
	if tag.RowsAffected() == 0 {
		return parley.Errorf(parley.KindNotFound, "%s not found", what)
	}
	return nil
}

// DeleteTenantRow deletes the row of table with that id and tenant; an id
// that is not a UUID or names no row of the tenant is a not-found Error.
func DeleteTenantRow(ctx context.Context, q Querier, table, what, tenantID, id string) error {
	if !LooksLikeUUID(id) {
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
