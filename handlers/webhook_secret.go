package handlers

// The words beside a webhook endpoint's signing secret, shown once by the
// REST API and the dashboard.

// WebhookSecretWarning accompanies the secret in the create response.
const WebhookSecretWarning = "Store this signing secret now: it is shown only once and cannot be retrieved again. " +
	"Verify each delivery's X-Service-Signature with it and reject timestamps more than 300 seconds old."
