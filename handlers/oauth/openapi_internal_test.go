package oauth

import (
	"reflect"
	"testing"

	"github.com/parley/parley/handlers/handlerstest"
)

// TestWireStructsMatchOpenAPI compares each struct the OAuth endpoints
// encode or decode with its schema in web/openapi.json
// (handlerstest.MatchOpenAPI).
func TestWireStructsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	handlerstest.MatchOpenAPI(t, "../../web/openapi.json", []handlerstest.WireType{
		{Schema: "OAuthError", Type: reflect.TypeFor[oauthError]()},
		{Schema: "OAuthServerMetadata", Type: reflect.TypeFor[authServerMetadata]()},
		{Schema: "OAuthResourceMetadata", Type: reflect.TypeFor[resourceMetadata]()},
		// The answer always has the client's id and issue time (omitempty
		// is for the request, which has neither).
		{Schema: "OAuthClient", Type: reflect.TypeFor[registration](), Filled: []string{"client_id", "client_id_issued_at"}},
		{Schema: "OAuthTokenResponse", Type: reflect.TypeFor[tokenResponse]()},
		{Schema: "JWKS", Type: reflect.TypeFor[jwks]()},
		// Request bodies: what the decoders read.
		{Schema: "OAuthClientRegistration", Type: reflect.TypeFor[registration](), Request: true,
			Absent: []string{"client_id", "client_id_issued_at"}},
	})
}
