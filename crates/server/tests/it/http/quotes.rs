//! `POST /v1/groups/{id}/quotes`, `GET /v1/groups/{id}/quotes`, `GET /v1/quotes/{id}` and the finalize test helper.
