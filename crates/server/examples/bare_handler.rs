//! The floor of `cargo xtask bench http` and the receiver of `cargo xtask
//! bench webhooks`: a bare actix-web server, on as many workers as `serve`
//! starts, built with the same profile. Its handlers:
//!
//! - `GET /`: a small JSON body (the floor);
//! - `POST /hook`: a webhook endpoint answering `204` at once, counting the
//!   deliveries and the distinct `webhook-id`s among them;
//! - `GET /hook`: those counts and when the first and the last delivery
//!   arrived, `{"received": N, "distinct": D, "first_ms": F, "last_ms": L}`
//!   (Unix ms, 0 before any);
//! - `DELETE /hook`: starts counting afresh.
//!
//! It prints `Listening on http://ADDR` as `serve` does.
//!
//! ```sh
//! cargo build --release -p server --example bare_handler
//! target/release/examples/bare_handler 127.0.0.1:0
//! ```

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

/// The webhook ids received, and how many deliveries.
#[derive(Default)]
struct Received {
    deliveries: u64,
    ids: HashSet<String>,
    first_ms: u128,
    last_ms: u128,
}

type Shared = web::Data<Arc<Mutex<Received>>>;

async fn ok() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"ok":true}"#)
}

async fn hook(req: HttpRequest, _body: web::Bytes, received: Shared) -> HttpResponse {
    let id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    if let Ok(mut r) = received.lock() {
        r.deliveries = r.deliveries.saturating_add(1);
        r.ids.insert(id);
        if r.first_ms == 0 {
            r.first_ms = now_ms;
        }
        r.last_ms = now_ms;
    }
    HttpResponse::NoContent().finish()
}

async fn counts(received: Shared) -> HttpResponse {
    let (deliveries, distinct, first, last) = received
        .lock()
        .map(|r| (r.deliveries, r.ids.len(), r.first_ms, r.last_ms))
        .unwrap_or_default();
    HttpResponse::Ok()
        .content_type("application/json")
        .body(format!(
            r#"{{"received":{deliveries},"distinct":{distinct},"first_ms":{first},"last_ms":{last}}}"#
        ))
}

async fn reset(received: Shared) -> HttpResponse {
    if let Ok(mut r) = received.lock() {
        *r = Received::default();
    }
    HttpResponse::NoContent().finish()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let received = web::Data::new(Arc::new(Mutex::new(Received::default())));
    let server = HttpServer::new(move || {
        App::new()
            .app_data(received.clone())
            .route("/", web::get().to(ok))
            .route("/hook", web::post().to(hook))
            .route("/hook", web::get().to(counts))
            .route("/hook", web::delete().to(reset))
    })
    .bind(&addr)?;
    for bound in server.addrs() {
        println!("Listening on http://{bound}");
    }
    server.run().await
}
