//! The HTTPS listener: TLS from [`super::tls`], HTTP/1.1 (hyper), `POST` of
//! `application/json` to an enabled admission path answered by [`super::review::answer`];
//! other paths get 404, other methods 405, another content type 415, a body over 3 MiB 413
//! (Volcano's `MaxRequestBody`). A failed TLS handshake or connection is logged at debug and
//! does not stop the server.

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use super::review::{answer, Context};

/// The largest request body read (Volcano: 3 MiB).
pub const MAX_REQUEST_BODY: usize = 3 << 20;

/// Reads a namespace's annotations for `/podgroups/mutate`.
pub type NamespaceReader =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<BTreeMap<String, String>>> + Send>> + Send + Sync>;

/// What the server answers with.
pub struct Service {
    /// The enabled paths.
    pub enabled: Vec<String>,
    /// The rules' context.
    pub ctx: Context,
    /// The namespace reader.
    pub namespaces: NamespaceReader,
}

fn reply(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// Answers one HTTP request.
pub async fn handle(svc: Arc<Service>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    if !svc.enabled.contains(&path) {
        return reply(StatusCode::NOT_FOUND, "text/plain", b"404 page not found\n".to_vec());
    }
    if req.method() != Method::POST {
        return reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", b"admission reviews are POSTed\n".to_vec());
    }
    let json = req
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return reply(StatusCode::UNSUPPORTED_MEDIA_TYPE, "text/plain", b"contentType is not application/json\n".to_vec());
    }
    let body = match Limited::new(req.into_body(), MAX_REQUEST_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return reply(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", b"request body too large\n".to_vec()),
    };
    let ns = svc.namespaces.clone();
    let out = answer(&path, &body, &svc.ctx, move |n| ns(n)).await;
    reply(StatusCode::OK, "application/json", out)
}

/// Serves `svc` over TLS on `listener` until `shutdown` turns true; returns the address.
pub fn spawn(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    svc: Arc<Service>,
    mut shutdown: watch::Receiver<bool>,
) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let addr = listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let acceptor = TlsAcceptor::from(tls);
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((tcp, peer)) = accepted else { continue };
                    let acceptor = acceptor.clone();
                    let svc = svc.clone();
                    tokio::spawn(async move {
                        let tls = match acceptor.accept(tcp).await {
                            Ok(s) => s,
                            Err(e) => {
                                tracing::debug!("webhook: TLS handshake with {peer} failed: {e}");
                                return;
                            }
                        };
                        let service = service_fn(move |req| {
                            let svc = svc.clone();
                            async move { Ok::<_, Infallible>(handle(svc, req).await) }
                        });
                        if let Err(e) = http1::Builder::new().serve_connection(TokioIo::new(tls), service).await {
                            tracing::debug!("webhook: connection from {peer}: {e}");
                        }
                    });
                }
                _ = shutdown.changed() => {
                    if *shutdown.borrow() {
                        return;
                    }
                }
            }
        }
    });
    (addr, task)
}
