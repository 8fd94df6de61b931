package parley_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// allowedImports is the table of ARCHITECTURE.md: which of our packages each
// package imports (tests aside), no more and no less; every package of the
// module has its row.
var allowedImports = map[string][]string{
	"":                                 {},
	"db":                               {"", "db/accounts", "db/audit", "db/business", "db/gaps", "db/idempotency", "db/internal/pgbase", "db/knowledge", "db/listing", "db/origins", "db/testset", "db/typing", "db/visitors", "db/webhooks"},
	"db/accounts":                      {"", "db/audit", "db/internal/pgbase"},
	"db/dbtest":                        {"", "db", "db/accounts", "db/visitors", "db/webhooks"},
	"db/deliveryargs":                  {},
	"db/internal/pgbase":               {""},
	"db/knowledge":                     {"", "db/internal/pgbase"},
	"db/live":                          {"", "db", "db/internal/pgbase"},
	"db/listing":                       {"", "db/internal/pgbase"},
	"db/business":                      {"", "db/internal/pgbase"},
	"db/typing":                        {"", "db/internal/pgbase"},
	"db/audit":                         {"db/internal/pgbase"},
	"db/visitors":                      {"", "db/internal/pgbase"},
	"db/origins":                       {"", "db/internal/pgbase"},
	"db/idempotency":                   {"db/internal/pgbase"},
	"db/testset":                       {"", "db/internal/pgbase"},
	"db/gaps":                          {"", "db/internal/pgbase"},
	"db/sealed":                        {},
	"db/webhooks":                      {"", "db/deliveryargs", "db/internal/pgbase"},
	"agent":                            {"", "agent/outbound", "agent/outbound/caldav", "agent/outbound/llm", "agent/outbound/mcpclient", "agent/rank", "agent/tools"},
	"agent/rank":                       {""},
	"agent/testrun":                    {"", "agent", "agent/outbound/llm", "db/testset"},
	"agent/tools/toolstest":            {"", "agent/outbound/llm"},
	"agent/tools":                      {"", "agent/outbound", "agent/outbound/caldav", "agent/outbound/llm", "agent/outbound/stripe"},
	"agent/outbound/caldav":            {"agent/outbound"},
	"agent/outbound/caldav/caldavtest": {},
	"agent/outbound":                   {},
	"agent/outbound/fetch":             {"", "agent/outbound"},
	"agent/outbound/fetch/fetchtest":   {},
	"agent/outbound/llm":               {"", "agent/outbound"},
	"agent/outbound/llm/llmtest":       {},
	"agent/outbound/mcpclient":         {"", "agent/outbound"},
	"agent/outbound/stripe":            {"", "agent/outbound"},
	"agent/outbound/stripe/stripetest": {},
	"agent/outbound/vapi":              {""},
	"agent/outbound/vapi/vapitest":     {},
	"auth":                             {"", "db", "db/accounts", "db/sealed"},
	"mail":                             {},
	"mail/mailtest":                    {},
	"jobs":                             {"", "agent/outbound", "agent/outbound/fetch", "auth", "db", "db/audit", "db/deliveryargs", "db/knowledge", "db/testset", "db/webhooks", "mail"},
	"views":                            {"static"},
	"widget":                           {},
	"static":                           {},
	"migrations":                       {},
	"manage":                           {"", "auth", "db", "db/accounts", "db/audit", "db/business", "db/gaps", "db/knowledge", "db/listing", "db/testset", "db/visitors", "db/webhooks"},
	"handlers":                         {"", "agent", "agent/outbound", "agent/outbound/caldav", "agent/outbound/fetch", "agent/outbound/llm", "agent/outbound/stripe", "agent/outbound/vapi", "agent/tools", "auth", "db", "db/accounts", "db/audit", "db/knowledge", "db/listing", "handlers/resource", "manage", "views"},
	"handlers/admin":                   {"", "agent", "auth", "db", "db/accounts", "db/audit", "db/knowledge", "db/listing", "db/visitors", "handlers", "handlers/admin/audit", "handlers/admin/corrections", "handlers/admin/dash", "handlers/admin/gaps", "handlers/admin/integrations", "handlers/admin/origins", "handlers/admin/plan", "handlers/admin/scripting", "handlers/admin/security", "handlers/admin/signup", "handlers/admin/team", "handlers/admin/testset", "handlers/admin/tools", "handlers/admin/voice", "handlers/jsonbody", "handlers/resource", "jobs", "manage", "views"},
	"handlers/admin/dash":              {"", "auth", "db", "handlers", "views"},
	"handlers/admin/team":              {"", "auth", "db", "db/accounts", "db/audit", "handlers", "handlers/admin/dash", "handlers/admin/security", "jobs", "manage", "views"},
	"handlers/admin/signup":            {"", "auth", "db", "db/accounts", "handlers", "handlers/admin/dash", "handlers/admin/security", "jobs", "views"},
	"handlers/admin/voice":             {"", "db", "handlers", "handlers/admin/dash", "handlers/resource", "views"},
	"handlers/admin/plan":              {"", "handlers", "handlers/admin/dash", "manage", "views"},
	"handlers/admin/testset":           {"", "db/testset", "handlers", "handlers/admin/dash", "handlers/resource", "manage", "views"},
	"handlers/admin/scripting":         {"handlers", "handlers/admin/dash", "views"},
	"handlers/admin/security":          {"", "auth", "db/accounts", "db/audit", "handlers", "handlers/admin/dash", "views"},
	"handlers/admin/origins":           {"", "handlers", "handlers/admin/dash", "handlers/auditing", "handlers/resource", "views"},
	"handlers/admin/audit":             {"", "db/audit", "handlers", "handlers/admin/dash", "handlers/resource", "views"},
	"handlers/admin/corrections":       {"", "db/audit", "handlers", "handlers/admin/dash", "manage", "views"},
	"handlers/admin/integrations":      {"", "agent", "agent/outbound", "agent/outbound/mcpclient", "auth", "db/accounts", "db/webhooks", "handlers", "handlers/admin/dash", "views"},
	"handlers/admin/tools":             {"", "agent/outbound/caldav", "db/business", "handlers", "handlers/admin/dash", "handlers/resource", "views"},
	"handlers/api":                     {"", "agent/outbound/caldav", "db", "db/audit", "db/business", "db/knowledge", "db/listing", "db/testset", "db/webhooks", "handlers", "handlers/jsonbody", "handlers/resource", "manage"},
	"handlers/admin/gaps":              {"", "db/gaps", "handlers", "handlers/admin/dash", "handlers/resource", "manage", "views"},
	"handlers/auditing":                {"", "db/audit", "handlers", "handlers/admin/dash"},
	"handlers/idempotent":              {"", "db/idempotency", "handlers", "handlers/jsonbody"},
	"handlers/handlerstest":            {""},
	"handlers/jsonbody":                {""},
	"handlers/mcpserver":               {"", "agent/tools", "auth", "db", "db/audit", "db/testset", "handlers", "handlers/jsonbody", "handlers/resource", "manage"},
	"handlers/resource":                {"", "db", "db/gaps", "db/knowledge", "db/listing", "db/testset", "db/visitors", "handlers/jsonbody", "manage"},
	"handlers/oauth":                   {"", "auth", "db", "db/accounts", "handlers", "manage"},
	"handlers/public":                  {"", "agent", "agent/outbound", "agent/outbound/llm", "agent/tools", "auth", "db", "db/live", "db/origins", "db/visitors", "handlers", "handlers/jsonbody", "widget"},
	"agent/spoken":                     {},
	"handlers/voice":                   {"", "agent", "agent/outbound/llm", "agent/outbound/vapi", "agent/spoken", "auth", "db", "handlers", "handlers/jsonbody"},
	"handlers/operator":                {"", "db/audit", "handlers", "handlers/jsonbody", "handlers/resource", "manage"},
	"web":                              {"", "agent", "agent/outbound", "agent/outbound/llm", "agent/outbound/mcpclient", "agent/outbound/stripe", "agent/outbound/vapi", "agent/testrun", "auth", "db", "db/audit", "db/live", "handlers", "handlers/admin", "handlers/api", "handlers/auditing", "handlers/idempotent", "handlers/jsonbody", "handlers/mcpserver", "handlers/oauth", "handlers/operator", "handlers/public", "handlers/voice", "jobs", "mail", "manage", "static", "views", "web/metrics", "web/tracing"},
	"web/metrics":                      {"", "agent", "db", "jobs"},
	"web/tracing":                      {},
	"clients/openapi30":                {},
	"clients/parleyclient":             {},
	"cmd/fakellm":                      {},
	"cmd/loadgen":                      {},
	"cmd/loadfloor":                    {},
	"web/webtest":                      {"", "agent/outbound", "agent/outbound/caldav/caldavtest", "agent/outbound/llm/llmtest", "agent/testrun", "auth", "db", "db/accounts", "db/audit", "db/dbtest", "db/knowledge", "db/testset", "db/visitors", "handlers/handlerstest", "jobs", "manage", "web"},
	"cmd/parley/clustertest":           {},
	"cmd/parley":                       {"", "auth", "db", "db/audit", "db/knowledge", "handlers/resource", "mail", "manage", "migrations", "web"},
}

// TestImportRules fails when a package imports one of ours that the design
// does not let it, and when the table lets a package import one it does not
// (a stale allowance): the dependencies point one way, and nothing imports
// handlers but web and the surfaces under handlers, which import no
// other surface.
func TestImportRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports ","}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/parley/parley"
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	used := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, imports, _ := strings.Cut(line, " ")
		pkg, _ := rel(path)
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %q is not in the import table (ARCHITECTURE.md): add it with what it may import", path)
			continue
		}
		used[pkg] = []string{}
		for _, imp := range strings.Split(imports, ",") {
			dep, ours := rel(imp)
			if !ours {
				continue
			}
			used[pkg] = append(used[pkg], dep)
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which the design does not allow", path, imp)
			}
		}
	}
	// The table says what each package imports, no more: an allowance
	// nothing uses would let a new import through unread.
	for pkg, allowed := range allowedImports {
		imports, exists := used[pkg]
		if !exists {
			t.Errorf("the import table names %q, which is no package of the module: remove its row", pkg)
			continue
		}
		for _, dep := range allowed {
			if !slices.Contains(imports, dep) {
				t.Errorf("the import table lets %q import %q, which it does not: remove it (here and in ARCHITECTURE.md)", pkg, dep)
			}
		}
	}
}

// TestArchitectureTable checks ARCHITECTURE.md's table of packages against
// allowedImports: each package has one row, and the row's last column
// names what the package imports of ours (`parley` for the root; words
// with a dot, such as `static.Path`, are prose), no more and no less.
func TestArchitectureTable(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| package | holds | imports of ours |")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no table of packages")
	}
	word := regexp.MustCompile("`([^`]+)`")
	rows := map[string]int{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(line), "|"), " | ")
		if len(cells) < 3 {
			break // the table's end
		}
		var named []string
		for _, w := range word.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			switch {
			case strings.Contains(w[1], "."):
			case w[1] == "parley":
				named = append(named, "")
			default:
				named = append(named, w[1])
			}
		}
		slices.Sort(named)
		// The first cell names one package or several alike.
		for _, w := range word.FindAllStringSubmatch(cells[0], -1) {
			pkg := w[1]
			if pkg == "parley" {
				pkg = ""
			}
			if rows[pkg]++; rows[pkg] == 2 {
				t.Errorf("ARCHITECTURE.md has more than one row for %q", w[1])
			}
			want := slices.Sorted(slices.Values(allowedImports[pkg]))
			if !slices.Equal(slices.Compact(named), want) {
				t.Errorf("ARCHITECTURE.md's row for %q names %q; architecture_test.go allows %q", w[1], named, want)
			}
		}
	}
	for pkg := range allowedImports {
		if rows[pkg] == 0 {
			t.Errorf("ARCHITECTURE.md has no row for %q", pkg)
		}
	}
}
