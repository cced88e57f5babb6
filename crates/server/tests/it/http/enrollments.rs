//! `POST /v1/groups/{id}/enrollments`, `GET /v1/groups/{id}/enrollments`, `GET /v1/enrollments/{id}` and the go-live test helper.
