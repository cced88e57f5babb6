//! The floor of `cargo xtask bench http`: a bare actix-web server whose
//! one handler answers `GET /` with a small JSON body, on as many workers
//! as `serve` starts, built with the same profile. It prints
//! `Listening on http://ADDR` as `serve` does.
//!
//! ```sh
//! cargo build --release -p server --example bare_handler
//! target/release/examples/bare_handler 127.0.0.1:0
//! ```

use actix_web::{App, HttpResponse, HttpServer, web};

async fn ok() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"ok":true}"#)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let server = HttpServer::new(|| App::new().route("/", web::get().to(ok))).bind(&addr)?;
    for bound in server.addrs() {
        println!("Listening on http://{bound}");
    }
    server.run().await
}
