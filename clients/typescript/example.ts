// An example of the typed client (README, "Typed clients"): lists a
// tenant's knowledge base, then adds an entry and reads it back. Run it with
// any TypeScript runner, e.g. PARLEY_URL=http://localhost:8080
// PARLEY_TOKEN=ak_... PARLEY_TENANT=demo npx tsx example.ts.
import { createParleyClient, type Schema } from "./index";

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const slug = env.PARLEY_TENANT ?? "demo";
const parley = createParleyClient(env.PARLEY_URL ?? "http://localhost:8080", env.PARLEY_TOKEN ?? "");

export async function firstPage(): Promise<Schema<"CorpusEntry">[]> {
  const { data, error, response } = await parley.GET("/tenants/{slug}/corpus", {
    params: { path: { slug }, query: { limit: 20, search: "pricing" } },
  });
  if (error) {
    // error is the document's Error shape for the statuses it lists.
    throw new Error(`GET corpus: ${response.status} ${error.error}`);
  }
  console.log(`${data.pagination.total} entries, ${data.pagination.totalPages} pages`);
  return data.corpus;
}

export async function addEntry(): Promise<string> {
  // A body declared with its schema's type has every member checked, a
  // misspelt optional one too (inline, the call checks the required members
  // and every type, but lets an unknown optional name through).
  const entry: Schema<"CorpusEntryCreate"> = {
    title: "Opening hours",
    content: "We answer from 9:00 to 18:00, Monday to Friday.",
    tags: ["hours"],
  };
  const { data, error, response } = await parley.POST("/tenants/{slug}/corpus", {
    params: { path: { slug } },
    body: entry,
  });
  if (error) {
    throw new Error(`POST corpus: ${response.status} ${error.error} ${JSON.stringify(error.details ?? {})}`);
  }
  const stored = data.corpus;
  console.log(data.created ? "created" : "updated", stored.id, stored.title, stored.segment?.slug ?? "every segment");
  return stored.id;
}

export async function segments(): Promise<string[]> {
  const { data, error } = await parley.GET("/tenants/{slug}/segments", { params: { path: { slug } } });
  if (error) throw new Error(error.error);
  return data.map((s) => `${s.slug}${s.isDefault ? " (default)" : ""}`);
}
