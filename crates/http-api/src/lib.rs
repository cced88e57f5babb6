//! HTTP adapter: the actix-web front end of the partner API (routing,
//! authentication, field casing, idempotency, rate limits, OpenAPI).
//!
//! Empty in this release; the `/v1` API is not served yet.
