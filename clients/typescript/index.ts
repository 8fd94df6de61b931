// Parley's REST API from TypeScript: createParleyClient is openapi-fetch's
// client typed by schema.d.ts, which `make clients` generates from
// web/openapi.json (do not edit it). Every path, parameter, body and answer
// is checked by the compiler against the document.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, paths };

/** A schema of the document by name: Schema<"CorpusEntry">. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

/**
 * A client of the Parley instance at baseUrl (such as
 * "https://parley.example.com"), sending token (an `ak_` API token or an
 * OAuth access token) as a Bearer credential on every request.
 */
export function createParleyClient(baseUrl: string, token: string): Client<paths> {
  return createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${token}` },
  });
}
