package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

// OAuthKey is a signing key of OAuth access tokens; PrivateKey is sealed
// with the secret box.
type OAuthKey struct {
	Kid        string    `db:"kid"`
	PrivateKey []byte    `db:"private_key"`
	CreatedAt  time.Time `db:"created_at"`
}

// LiveOAuthKeys are the keys not retired, newest (the signing key) first.
func (d *Accounts) LiveOAuthKeys(ctx context.Context) ([]OAuthKey, error) {
	rows, _ := d.pool.Query(ctx, `SELECT kid, private_key, created_at FROM oauth_keys
		WHERE retired_at IS NULL ORDER BY created_at DESC, kid`)
	ks, err := pgx.CollectRows(rows, pgx.RowToStructByName[OAuthKey])
	if err != nil {
		return nil, fmt.Errorf("reading OAuth keys: %w", err)
	}
	return ks, nil
}

// AddOAuthKey stores a new signing key. When first, it is stored only
// when no live key exists (the first start of several instances at once
// stores one). Otherwise (a rotation) every older key but the newest is
// retired, so that the JWKS holds the new key and the previous one (whose
// tokens live at most 15 more minutes).
func (d *Accounts) AddOAuthKey(ctx context.Context, kid string, sealed []byte, first bool) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('oauth_keys'))`); err != nil {
			return fmt.Errorf("locking OAuth keys: %w", err)
		}
		if first {
			_, err := tx.Exec(ctx, `INSERT INTO oauth_keys (kid, private_key)
				SELECT $1, $2 WHERE NOT EXISTS (SELECT 1 FROM oauth_keys WHERE retired_at IS NULL)`, kid, sealed)
			if err != nil {
				return fmt.Errorf("storing OAuth key: %w", err)
			}
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_keys SET retired_at = now() WHERE retired_at IS NULL
			AND kid NOT IN (SELECT kid FROM oauth_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1)`); err != nil {
			return fmt.Errorf("retiring OAuth keys: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO oauth_keys (kid, private_key) VALUES ($1, $2)`, kid, sealed); err != nil {
			return fmt.Errorf("storing OAuth key: %w", err)
		}
		return nil
	})
}

// OAuthClient is a registered public client.
type OAuthClient struct {
	ID           string    `db:"id"`
	Name         string    `db:"client_name"`
	RedirectURIs []string  `db:"redirect_uris"`
	Scopes       []string  `db:"scopes"`
	CreatedAt    time.Time `db:"created_at"`
}

// CreateOAuthClient stores a registered client.
func (d *Accounts) CreateOAuthClient(ctx context.Context, c OAuthClient) (OAuthClient, error) {
	rows, _ := d.pool.Query(ctx, `INSERT INTO oauth_clients (id, client_name, redirect_uris, scopes)
		VALUES ($1, $2, $3, $4) RETURNING id, client_name, redirect_uris, scopes, created_at`,
		c.ID, c.Name, c.RedirectURIs, c.Scopes)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthClient])
	if err != nil {
		return OAuthClient{}, fmt.Errorf("storing OAuth client: %w", err)
	}
	return out, nil
}

// OAuthClientByID is a registered client; NotFound when there is none.
func (d *Accounts) OAuthClientByID(ctx context.Context, id string) (OAuthClient, error) {
	if !pgbase.Storable(id) {
		return OAuthClient{}, parley.Errorf(parley.KindNotFound, "OAuth client not found")
	}
	rows, _ := d.pool.Query(ctx, `SELECT id, client_name, redirect_uris, scopes, created_at FROM oauth_clients WHERE id = $1`, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthClient])
	if err != nil {
		return OAuthClient{}, pgbase.NotFound(err, "OAuth client")
	}
	return c, nil
}

// OAuthCode is an authorization code, known by its SHA-256.
type OAuthCode struct {
	ClientID      string     `db:"client_id"`
	TenantID      string     `db:"tenant_id"`
	UserID        string     `db:"user_id"`
	RedirectURI   string     `db:"redirect_uri"`
	Scopes        []string   `db:"scopes"`
	Resource      string     `db:"resource"`
	CodeChallenge string     `db:"code_challenge"`
	ExpiresAt     time.Time  `db:"expires_at"`
	UsedAt        *time.Time `db:"used_at"`
}

// CreateOAuthCode stores a code by its hash; it deletes codes expired for a day.
func (d *Accounts) CreateOAuthCode(ctx context.Context, hash []byte, c OAuthCode, now time.Time) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_codes WHERE expires_at < $1`, now.Add(-24*time.Hour)); err != nil {
			return fmt.Errorf("deleting old OAuth codes: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO oauth_codes (code_hash, client_id, tenant_id, user_id, redirect_uri, scopes, resource, code_challenge, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			hash, c.ClientID, c.TenantID, c.UserID, c.RedirectURI, c.Scopes, c.Resource, c.CodeChallenge, c.ExpiresAt); err != nil {
			return fmt.Errorf("storing OAuth code: %w", err)
		}
		return nil
	})
}

// OAuthCodeByHash is the code with that hash; NotFound when there is none.
func (d *Accounts) OAuthCodeByHash(ctx context.Context, hash []byte) (OAuthCode, error) {
	rows, _ := d.pool.Query(ctx, `SELECT client_id, tenant_id, user_id, redirect_uri, scopes, resource, code_challenge, expires_at, used_at
		FROM oauth_codes WHERE code_hash = $1`, hash)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthCode])
	if err != nil {
		return OAuthCode{}, pgbase.NotFound(err, "OAuth code")
	}
	return c, nil
}

// OAuthIssue is what one token response stores: the access token's jti and
// the refresh token's hash, with their expiries.
type OAuthIssue struct {
	JTI            string
	AccessExpires  time.Time
	RefreshHash    []byte
	RefreshExpires time.Time
}

// OAuthGrant is an owner's approval of a client, the family of the tokens
// issued from one code.
type OAuthGrant struct {
	ID         string     `db:"id"`
	ClientID   string     `db:"client_id"`
	TenantID   string     `db:"tenant_id"`
	UserID     string     `db:"user_id"`
	Scopes     []string   `db:"scopes"`
	Resource   string     `db:"resource"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
}

const grantColumns = `id, client_id, tenant_id, user_id, scopes, resource, created_at, last_used_at, revoked_at`

// ErrOAuthReplay is returned for a code or refresh token used a second
// time: what it issued is revoked.
var ErrOAuthReplay = errors.New("authorization code or refresh token used twice")

// ErrOAuthGrantInvalid is returned for a refresh token that is unknown,
// expired, of another client or of a revoked grant.
var ErrOAuthGrantInvalid = errors.New("refresh token is invalid, expired or revoked")

func insertIssue(ctx context.Context, tx pgx.Tx, grantID string, is OAuthIssue) error {
	if _, err := tx.Exec(ctx, `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, $3)`,
		is.RefreshHash, grantID, is.RefreshExpires); err != nil {
		return fmt.Errorf("storing refresh token: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO oauth_access_tokens (jti, grant_id, expires_at) VALUES ($1, $2, $3)`,
		is.JTI, grantID, is.AccessExpires); err != nil {
		return fmt.Errorf("storing access token: %w", err)
	}
	return nil
}

// RedeemOAuthCode uses the code with that hash once: it starts a grant from
// it and stores the tokens of is. A code already used gets ErrOAuthReplay
// and the grant it started is revoked.
func (d *Accounts) RedeemOAuthCode(ctx context.Context, hash []byte, is OAuthIssue, now time.Time) (OAuthGrant, error) {
	var g OAuthGrant
	replay := false
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1 AND used_at IS NULL
			RETURNING client_id, tenant_id, user_id, redirect_uri, scopes, resource, code_challenge, expires_at, used_at`, hash, now)
		c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthCode])
		if errors.Is(err, pgx.ErrNoRows) {
			replay = true
			_, err := tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2 WHERE revoked_at IS NULL
				AND id = (SELECT grant_id FROM oauth_codes WHERE code_hash = $1)`, hash, now)
			return err
		}
		if err != nil {
			return fmt.Errorf("using OAuth code: %w", err)
		}
		rows, _ = tx.Query(ctx, `INSERT INTO oauth_grants (client_id, tenant_id, user_id, scopes, resource, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+grantColumns, c.ClientID, c.TenantID, c.UserID, c.Scopes, c.Resource, now)
		if g, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthGrant]); err != nil {
			return fmt.Errorf("storing OAuth grant: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_codes SET grant_id = $2 WHERE code_hash = $1`, hash, g.ID); err != nil {
			return fmt.Errorf("linking OAuth code: %w", err)
		}
		return insertIssue(ctx, tx, g.ID, is)
	})
	if err != nil {
		return OAuthGrant{}, err
	}
	if replay {
		return OAuthGrant{}, ErrOAuthReplay
	}
	return g, nil
}

// RefreshOAuth rotates the refresh token with that hash, issued to
// clientID: it is marked rotated and the tokens of is take its place. A
// rotated one used again gets ErrOAuthReplay and its whole grant is revoked;
// an unknown, expired or revoked one, or one of another client,
// ErrOAuthGrantInvalid.
func (d *Accounts) RefreshOAuth(ctx context.Context, hash []byte, clientID string, is OAuthIssue, now time.Time, check func(OAuthGrant) error) (OAuthGrant, error) {
	var g OAuthGrant
	var outcome error
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var grantID string
		var expires time.Time
		var rotated *time.Time
		err := tx.QueryRow(ctx, `SELECT grant_id, expires_at, rotated_at FROM oauth_refresh_tokens WHERE token_hash = $1 FOR UPDATE`, hash).
			Scan(&grantID, &expires, &rotated)
		if errors.Is(err, pgx.ErrNoRows) {
			outcome = ErrOAuthGrantInvalid
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading refresh token: %w", err)
		}
		rows, _ := tx.Query(ctx, `SELECT `+grantColumns+` FROM oauth_grants WHERE id = $1 FOR UPDATE`, grantID)
		if g, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthGrant]); err != nil {
			return fmt.Errorf("reading OAuth grant: %w", err)
		}
		switch {
		case g.ClientID != clientID || g.RevokedAt != nil || !expires.After(now):
			outcome = ErrOAuthGrantInvalid
			return nil
		case rotated != nil:
			outcome = ErrOAuthReplay
			_, err := tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1`, g.ID, now)
			return err
		}
		if check != nil {
			if outcome = check(g); outcome != nil {
				return nil // refused before rotating: the refresh token stays good
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_refresh_tokens SET rotated_at = $2 WHERE token_hash = $1`, hash, now); err != nil {
			return fmt.Errorf("rotating refresh token: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1`, g.ID, now); err != nil {
			return fmt.Errorf("touching OAuth grant: %w", err)
		}
		return insertIssue(ctx, tx, g.ID, is)
	})
	if err != nil {
		return OAuthGrant{}, err
	}
	if outcome != nil {
		return OAuthGrant{}, outcome
	}
	return g, nil
}

// OAuthAccessLive reports whether the access token jti is neither revoked
// nor of a revoked grant, and notes the grant's use (at most once a minute,
// so that most checks stay one read).
func (d *Accounts) OAuthAccessLive(ctx context.Context, jti string, now time.Time) (bool, error) {
	if !pgbase.Storable(jti) {
		return false, nil
	}
	var n int
	err := d.pool.QueryRow(ctx, `WITH live AS (
			SELECT g.id FROM oauth_access_tokens a JOIN oauth_grants g ON g.id = a.grant_id
			WHERE a.jti = $1 AND a.revoked_at IS NULL AND g.revoked_at IS NULL),
		touch AS (
			UPDATE oauth_grants g SET last_used_at = $2::timestamptz FROM live
			WHERE g.id = live.id AND (g.last_used_at IS NULL OR g.last_used_at < $2::timestamptz - interval '1 minute'))
		SELECT count(*) FROM live`, jti, now).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking access token: %w", err)
	}
	return n > 0, nil
}

// RevokeOAuthRefresh revokes the grant of the refresh token with that hash
// when it was issued to clientID; an unknown token is no error (RFC 7009).
func (d *Accounts) RevokeOAuthRefresh(ctx context.Context, hash []byte, clientID string, now time.Time) error {
	_, err := d.pool.Exec(ctx, `UPDATE oauth_grants g SET revoked_at = $3 FROM oauth_refresh_tokens r
		WHERE r.token_hash = $1 AND g.id = r.grant_id AND g.client_id = $2 AND g.revoked_at IS NULL`, hash, clientID, now)
	if err != nil {
		return fmt.Errorf("revoking refresh token: %w", err)
	}
	return nil
}

// RevokeOAuthAccess revokes the access token jti when it was issued to clientID.
func (d *Accounts) RevokeOAuthAccess(ctx context.Context, jti, clientID string, now time.Time) error {
	if !pgbase.Storable(jti) {
		return nil
	}
	_, err := d.pool.Exec(ctx, `UPDATE oauth_access_tokens a SET revoked_at = $3 FROM oauth_grants g
		WHERE a.jti = $1 AND g.id = a.grant_id AND g.client_id = $2 AND a.revoked_at IS NULL`, jti, clientID, now)
	if err != nil {
		return fmt.Errorf("revoking access token: %w", err)
	}
	return nil
}

// ConnectedApp is a client holding live grants on a tenant.
type ConnectedApp struct {
	ClientID     string     `db:"client_id"`
	ClientName   string     `db:"client_name"`
	RedirectURIs []string   `db:"redirect_uris"`
	Scopes       []string   `db:"scopes"`
	AuthorizedAt time.Time  `db:"authorized_at"`
	LastUsedAt   *time.Time `db:"last_used_at"`
}

// ConnectedApps lists the clients with a live grant on the tenant (not
// revoked, with a refresh token still usable), last used first, with the
// union of their grants' scopes.
func (d *Accounts) ConnectedApps(ctx context.Context, tenantID string, now time.Time) ([]ConnectedApp, error) {
	rows, _ := d.pool.Query(ctx, `SELECT c.id AS client_id, c.client_name, c.redirect_uris,
			array(SELECT DISTINCT s FROM oauth_grants g2, unnest(g2.scopes) s
				WHERE g2.tenant_id = $1 AND g2.client_id = c.id AND g2.revoked_at IS NULL ORDER BY s) AS scopes,
			min(g.created_at) AS authorized_at, max(g.last_used_at) AS last_used_at
		FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
		WHERE g.tenant_id = $1 AND g.revoked_at IS NULL
			AND EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = g.id AND r.rotated_at IS NULL AND r.expires_at > $2)
		GROUP BY c.id ORDER BY max(g.last_used_at) DESC NULLS LAST, c.client_name`, tenantID, now)
	apps, err := pgx.CollectRows(rows, pgx.RowToStructByName[ConnectedApp])
	if err != nil {
		return nil, fmt.Errorf("listing connected apps: %w", err)
	}
	return apps, nil
}

// RevokeConnectedApp revokes every grant of the client on the tenant, and so
// every token issued under them; it reports whether there was one.
func (d *Accounts) RevokeConnectedApp(ctx context.Context, tenantID, clientID string, now time.Time) (bool, error) {
	if !pgbase.Storable(clientID) {
		return false, nil
	}
	tag, err := d.pool.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $3 WHERE tenant_id = $1 AND client_id = $2 AND revoked_at IS NULL`,
		tenantID, clientID, now)
	if err != nil {
		return false, fmt.Errorf("revoking connected app: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// DeleteExpiredOAuth deletes what can no longer be used: access tokens an
// hour after they expired, refresh tokens once expired (a rotated one is
// kept until then, so that its reuse is still caught), and the grants left
// with neither; it returns how many rows went.
func (d *Accounts) DeleteExpiredOAuth(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	for _, q := range []string{
		`DELETE FROM oauth_access_tokens WHERE expires_at < $1::timestamptz - interval '1 hour'`,
		`DELETE FROM oauth_refresh_tokens WHERE expires_at < $1`,
		`DELETE FROM oauth_grants g WHERE created_at < $1
			AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = g.id)
			AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.grant_id = g.id)`,
	} {
		tag, err := d.pool.Exec(ctx, q, now)
		if err != nil {
			return n, fmt.Errorf("deleting expired OAuth tokens: %w", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}
