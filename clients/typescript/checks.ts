// What the type-check refuses (make test compiles this file with the
// others): each line below is a mistake the compiler must catch, so that a
// schema.d.ts that let one through (or an example drifting from the
// document unnoticed) fails the suite with "Unused '@ts-expect-error'".
import { createParleyClient, type Schema } from "./index";

const parley = createParleyClient("http://localhost:8080", "ak_test");

export async function mistakes(): Promise<void> {
  await parley.POST("/tenants/{slug}/corpus", {
    params: { path: { slug: "demo" } },
    // @ts-expect-error: a wrong field name ("body" for "content").
    body: { title: "Opening hours", body: "9:00 to 18:00" },
  });
  const entry: Schema<"CorpusEntryCreate"> = {
    title: "Opening hours",
    content: "9:00 to 18:00",
    // @ts-expect-error: a misspelt optional member ("tag" for "tags").
    tag: ["hours"],
  };
  await parley.POST("/tenants/{slug}/corpus", { params: { path: { slug: "demo" } }, body: entry });
  await parley.GET("/tenants/{slug}/corpus", {
    // @ts-expect-error: a query parameter the operation does not have.
    params: { path: { slug: "demo" }, query: { pageSize: 20 } },
  });
  // @ts-expect-error: a path the document does not have.
  await parley.GET("/tenants/{slug}/entries", { params: { path: { slug: "demo" } } });
  const { data } = await parley.GET("/tenants/{slug}/corpus", { params: { path: { slug: "demo" } } });
  // @ts-expect-error: a member the answer does not have ("entries" for "corpus").
  console.log(data?.entries);
  // @ts-expect-error: a wrong type (a string where the document says integer).
  await parley.GET("/tenants/{slug}/corpus", { params: { path: { slug: "demo" }, query: { limit: "20" } } });
}
