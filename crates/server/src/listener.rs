//! The HTTP listener: actix's HTTP/1.1 service over the app, as
//! `actix_web::HttpServer` builds it (same timeouts), with one addition —
//! each connection runs through [`Enveloped`], so that the answers the
//! protocol layer writes on its own (431 for a head that is too large, 400
//! for one that is not HTTP, 408 for a head that never completes) carry
//! the error envelope and a `Request-Id` like every other error, instead
//! of an empty body.

mod enveloped;

use std::fmt;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_http::{HttpService, Request, Response};
use actix_service::{IntoServiceFactory, ServiceFactory, ServiceFactoryExt as _, map_config};
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{AppConfig, Server, Service, fn_service};
use actix_web::rt::net::TcpStream;

pub use enveloped::Enveloped;

/// How long a client has to send a request head (actix's default).
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an idle kept-alive connection stays open (actix's default).
const KEEP_ALIVE: Duration = Duration::from_secs(5);
/// How long a closing connection may take to shut down (actix's default).
const DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Binds `addr` as actix does: `SO_REUSEADDR` (a restarted process gets
/// its port back at once) and a backlog of 1,024.
///
/// # Errors
/// When the address cannot be bound.
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(TcpListener::from(socket))
}

/// Connections waiting to be accepted (actix's default).
const BACKLOG: i32 = 1024;

/// A server answering HTTP/1.1 on `listener` with the apps `make_app`
/// builds (one per worker).
///
/// # Errors
/// When the listener has no local address or cannot be registered.
pub fn server<F, I, S, B>(listener: TcpListener, make_app: F) -> std::io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<Response<BoxBody>> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let addr = listener.local_addr()?;
    Ok(Server::build()
        .listen("partner-api", listener, move || {
            let app = make_app();
            let config = AppConfig::__priv_test_new(false, addr.to_string(), addr);
            fn_service(|io: TcpStream| async move {
                let peer = io.peer_addr().ok();
                let _ = io.set_nodelay(true);
                Ok((Enveloped::new(io), peer))
            })
            .and_then(
                HttpService::build()
                    .keep_alive(KEEP_ALIVE)
                    .client_request_timeout(HEAD_TIMEOUT)
                    .client_disconnect_timeout(DISCONNECT_TIMEOUT)
                    .local_addr(addr)
                    .h1(map_config(app, move |()| config.clone())),
            )
        })?
        .run())
}
