package parley

// Plan is one row of the plan table: what a tenant may use and how much of it.
type Plan struct {
	Name               string
	Widget             bool // the public chat endpoint and the widget
	MCP                bool // the tenant's own MCP tools (enrichMCP)
	Voice              bool // the phone channel
	ConversationsLimit int  // new conversations per calendar month, before bot seats
	SegmentsLimit      int
	CorpusLimit        int
	MembersLimit       int // the team: members and open invitations together
}

// ConversationsPerBotSeat is what one paid bot seat adds to the monthly conversation limit.
const ConversationsPerBotSeat = 1000

// Plans is the plan table, cheapest first. The README documents it.
var Plans = []Plan{
	{Name: "free", ConversationsLimit: 100, SegmentsLimit: 1, CorpusLimit: 50, MembersLimit: 2},
	{Name: "starter", Widget: true, ConversationsLimit: 1000, SegmentsLimit: 3, CorpusLimit: 500, MembersLimit: 5},
	{Name: "builder", Widget: true, MCP: true, ConversationsLimit: 5000, SegmentsLimit: 10, CorpusLimit: 5000, MembersLimit: 15},
	{Name: "scale", Widget: true, MCP: true, Voice: true, ConversationsLimit: 25000, SegmentsLimit: 50, CorpusLimit: 50000, MembersLimit: 50},
}

// PlanByName returns the named plan.
func PlanByName(name string) (Plan, bool) {
	for _, p := range Plans {
		if p.Name == name {
			return p, true
		}
	}
	return Plan{}, false
}

// PlanNames lists the plan names in order.
func PlanNames() []string {
	names := make([]string, len(Plans))
	for i, p := range Plans {
		names[i] = p.Name
	}
	return names
}
