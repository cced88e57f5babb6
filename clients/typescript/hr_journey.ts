// An HR platform's journey through the TypeScript client generated from
// `/v1/openapi.json?style=camel` (openapi-typescript types, openapi-fetch
// calls), against a running service whose pricing answers 202 at once:
// price-on-plan on the partner's own plan and on market plans alone, each
// polled from 202 to its answer through `GET /quotes/{id}`; a quote of the
// lead group; an embedded enrollment; the events that followed.
//
// Usage: node hr_journey.js BASE_URL API_KEY (compiled with tsc --strict
// next to the generated `schema.d.ts`). Exit 0 when every step answered as
// the contract says.

import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

const [baseUrl, key] = process.argv.slice(2);
if (!baseUrl || !key) {
  console.error("usage: hr_journey.js BASE_URL API_KEY");
  process.exit(2);
}
const api = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Bearer ${key}` },
});

function fail(step: string, what: unknown): never {
  console.error(`${step}: ${JSON.stringify(what)}`);
  process.exit(1);
}

function ok(step: string, status: number): void {
  console.log(`ok  ${step}: ${status}`);
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

const census = [
  { externalId: "E-1", firstName: "Ana", lastName: "Diaz", dob: "1988-04-12", zip: "60601", dependents: [] },
  {
    externalId: "E-2",
    firstName: "Ben",
    lastName: "Okafor",
    age: 46,
    zip: "60614",
    dependents: [{ relationship: "spouse", age: 44 }],
  },
];

const ownPlan = {
  carrier: "Blue Shield of California",
  planName: "Silver Full PPO HSA 3400",
  planType: "PPO",
  network: "Full PPO",
  hsaEligible: true,
  deductibleIndividualCents: 340000,
  oopMaxIndividualCents: 750000,
  pmpmCents: 52000,
};

const benchmark = {
  carrier: "Blue Shield of California",
  planName: "Platinum Full PPO 0/10",
  planType: "PPO",
  metalTier: "Platinum",
  network: "Full PPO",
  hsaEligible: false,
  deductibleIndividualCents: 0,
  oopMaxIndividualCents: 400000,
  pmpmCents: 98000,
};

type PriceInput = components["schemas"]["PriceOnPlanInput"];
/** The camelCase answer (`versions`), as the document types it. */
type Answer = components["schemas"]["PriceOnPlanVersions"];
type Pending = components["schemas"]["PriceOnPlanVersionsPending"];

/** Prices `body`: a 202 names its quote and `Location`, polled through
 * `GET /quotes/{id}` until the answer is stored. */
async function price(step: string, body: PriceInput): Promise<Answer> {
  const first = await api.POST("/v1/price-on-plan", { body });
  const pending = first.data;
  if (first.response.status !== 202 || !pending || pending.status !== "pricing") {
    fail(`${step} (the wait budget is 0, so 202 first)`, { status: first.response.status, body: first.error });
  }
  const location = first.response.headers.get("Location");
  if (location !== `/v1/quotes/${pending.quoteId}`) fail(step, { pending, location });
  ok(`${step} (pending ${pending.quoteId})`, first.response.status);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = await api.GET("/v1/quotes/{id}", { params: { path: { id: pending.quoteId } } });
    const quote = read.data;
    if (read.response.status !== 200 || !quote) fail(`${step}: poll`, read.error);
    if ("versions" in quote || "reason" in quote) {
      const answer = quote as Answer;
      ok(`${step}: polled to ${answer.status}`, read.response.status);
      return answer;
    }
    if (!("retryAfterSeconds" in quote)) fail(`${step}: not a price-on-plan answer`, quote);
    const still = quote as Pending;
    if (Date.now() > deadline) fail(`${step}: still pricing after 60 s`, still);
    await sleep(Math.min(1000, still.retryAfterSeconds * 1000));
  }
}

async function main(): Promise<void> {
  const ping = await api.GET("/v1/ping");
  if (!ping.data || ping.data.mode !== "test") fail("ping", ping.error);
  ok("ping", ping.response.status);

  // 1. On the partner's own plan (with the market plans it quoted).
  const own = await price("price on own plan", {
    census,
    plan: ownPlan,
    marketPlans: [benchmark],
    company: { name: "Acme Robotics", domain: "acme-ts.example", zip: "60601", state: "IL" },
  });
  const ids = (own.versions ?? []).map((v) => v.id);
  if (own.status !== "ready" || ids.join() !== "diamond,value") fail("price on own plan", own);
  const diamond = own.versions?.[0];
  if (!diamond?.monthly || diamond.monthly.totalCents <= 0 || !diamond.worst_year) fail("price on own plan", own);

  // 2. On market plans alone (HR platforms may): the HSA PPO among them
  // is the base.
  const market = await price("price on market plans", {
    census,
    marketPlans: [{ ...ownPlan, metalTier: "Silver" }, benchmark],
    company: { name: "Globex", domain: "globex-ts.example", zip: "60601", state: "IL" },
  });
  if (market.status !== "ready" || !market.groupId) fail("price on market plans", market);

  // 3. The lead group of the first answer: a market-rate quote, then an
  // embedded enrollment from it.
  const groupId = own.groupId;
  if (!groupId) fail("the lead group", own);
  let quoteId: string | undefined;
  const deadline = Date.now() + 60_000;
  while (!quoteId) {
    const quote = await api.POST("/v1/groups/{groupId}/quotes", {
      params: { path: { groupId } },
      body: {},
    });
    if (quote.data) {
      quoteId = quote.data.id;
      ok("create quote", quote.response.status);
    } else if (quote.response.status !== 409 || Date.now() > deadline) {
      fail("create quote", quote.error);
    } else {
      await sleep(200);
    }
  }
  const enrollment = await api.POST("/v1/groups/{groupId}/enrollments", {
    params: { path: { groupId } },
    body: {
      quoteId,
      onboardingMode: "embedded",
      signatory: { name: "Dana Lee", email: "dana@acme-ts.example" },
    },
  });
  if (!enrollment.data || enrollment.data.onboardingMode !== "embedded") {
    fail("create enrollment", enrollment.error);
  }
  ok("create enrollment (embedded)", enrollment.response.status);
  const enrollmentId = enrollment.data.id;
  const onboarding = await api.GET("/v1/enrollments/{id}/onboarding", {
    params: { path: { id: enrollmentId } },
  });
  if (!onboarding.data) fail("onboarding", onboarding.error);
  ok("read the onboarding checklist", onboarding.response.status);

  // 4. The events that followed, found by type.
  const events = await api.GET("/v1/events", {
    params: { query: { type: "enrollment.created" } },
  });
  if (!events.data) fail("events", events.error);
  const mine = events.data.events.filter((e) => (e.data as { enrollmentId?: string }).enrollmentId === enrollmentId);
  if (mine.length !== 1) fail("events", events.data);
  ok("events by type", events.response.status);
  console.log("journey: ok");
}

main().catch((e: unknown) => fail("journey", String(e)));
