package audit

// The actions of the audit log, "area.verb". Words gives each its words for
// the owner, in the past tense.
const (
	ActionSignedIn  = "account.signed_in"
	ActionSignedOut = "account.signed_out"

	ActionPasswordChanged   = "account.password_changed"
	ActionSessionsEnded     = "account.sessions_ended"
	ActionTwoFactorOn       = "account.two_factor_on"
	ActionTwoFactorOff      = "account.two_factor_off"
	ActionTwoFactorRequired = "tenant.two_factor_required"

	ActionMemberInvited      = "member.invited"
	ActionInvitationRevoked  = "member.invitation_revoked"
	ActionInvitationAccepted = "member.joined"
	ActionMemberRoleChanged  = "member.role_changed"
	ActionMemberRemoved      = "member.removed"

	ActionAccessDenied = "access.denied"

	ActionTokenCreated = "token.created"
	ActionTokenRevoked = "token.revoked"
	ActionAppConnected = "oauth.granted"
	ActionAppRevoked   = "oauth.revoked"

	ActionWebhookCreated = "webhook.created"
	ActionWebhookChanged = "webhook.changed"
	ActionWebhookDeleted = "webhook.deleted"

	ActionSettingsChanged = "settings.changed"
	ActionDeleted         = "data.deleted"
	ActionExported        = "data.exported"

	ActionPlanChanged   = "plan.changed"
	ActionTenantCreated = "tenant.created"

	ActionAnswerCorrected = "knowledge.answer_corrected"
)

// TargetIDKey is the echo.Context key under which a handler leaves the id
// of what it changed when its path does not name it (the entry an answer's
// correction made or updated), for the audit log's entry.
const TargetIDKey = "auditTargetID"

// The surfaces an entry came through: its details' "via".
const (
	ViaDashboard = "dashboard"
	ViaAPI       = "api"
	ViaMCP       = "mcp"
	ViaChat      = "chat" // a chat turn holding an admin token
)

// Words are the actions in the owner's words.
var Words = map[string]string{
	ActionSignedIn:           "Signed in",
	ActionSignedOut:          "Signed out",
	ActionPasswordChanged:    "Changed their password",
	ActionSessionsEnded:      "Signed out other sessions",
	ActionTwoFactorOn:        "Turned on two-step sign-in",
	ActionTwoFactorOff:       "Turned off two-step sign-in",
	ActionTwoFactorRequired:  "Changed the two-step sign-in requirement",
	ActionMemberInvited:      "Invited a member",
	ActionInvitationRevoked:  "Cancelled an invitation",
	ActionInvitationAccepted: "Joined the team",
	ActionMemberRoleChanged:  "Changed a member's role",
	ActionMemberRemoved:      "Removed a member",
	ActionAccessDenied:       "Was refused access",
	ActionTokenCreated:       "Created an API token",
	ActionTokenRevoked:       "Revoked an API token",
	ActionAppConnected:       "Connected an app",
	ActionAppRevoked:         "Disconnected an app",
	ActionWebhookCreated:     "Added a webhook",
	ActionWebhookChanged:     "Changed a webhook",
	ActionWebhookDeleted:     "Deleted a webhook",
	ActionSettingsChanged:    "Changed settings",
	ActionDeleted:            "Deleted data",
	ActionExported:           "Exported data",
	ActionPlanChanged:        "Changed the plan",
	ActionTenantCreated:      "Created the workspace",
	ActionAnswerCorrected:    "Improved an answer into the knowledge base",
}
