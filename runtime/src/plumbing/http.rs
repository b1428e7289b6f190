//! The HTTP servers every long-running command offers: `/metrics` (OpenMetrics text from any
//! encoder) and `/healthz` (a health check), on a Go-style listen address (`:8080`,
//! `host:port`), stopped by a shutdown signal after open connections finish (volcano-behaviour.md
//! §1.1: Volcano serves them on `--listen-address` `:8080` and `--healthz-address` `:11251`).
//! It knows no metric: the scheduler's registry is in [`crate::live::metrics`], the
//! controller's in [`crate::controller::metrics`].

use std::convert::Infallible;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The `Content-Type` of `/metrics`.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A listen address as Go's `net.Listen` takes it: `:8080` (every interface) or `host:port`
/// (`127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenAddress {
    /// The host, `None` for every interface.
    pub host: Option<String>,
    /// The port (0 = any free port).
    pub port: u16,
}

impl ListenAddress {
    /// Parses `:port` or `host:port`. Errors name the value and what is wrong with it.
    pub fn parse(s: &str) -> Result<Self, ServeError> {
        let bad = |reason: &str| ServeError::Address { value: s.to_string(), reason: reason.to_string() };
        let (host, port) = s.rsplit_once(':').ok_or_else(|| bad("expected :PORT or HOST:PORT"))?;
        let port: u16 = port.parse().map_err(|_| bad("the port must be a number from 0 to 65535"))?;
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if host.contains(':') && !s.starts_with('[') {
            return Err(bad("an IPv6 host must be in brackets, e.g. [::1]:8080"));
        }
        Ok(ListenAddress { host: (!host.is_empty()).then(|| host.to_string()), port })
    }

    /// Binds a listener: every interface (IPv6 dual-stack, else IPv4) for no host, else the
    /// host (names resolved).
    pub async fn bind(&self) -> Result<TcpListener, ServeError> {
        let err = |source| ServeError::Bind { addr: self.to_string(), source };
        match &self.host {
            None => match TcpListener::bind(SocketAddr::from((Ipv6Addr::UNSPECIFIED, self.port))).await {
                Ok(l) => Ok(l),
                Err(_) => TcpListener::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, self.port))).await.map_err(err),
            },
            Some(h) => TcpListener::bind((h.as_str(), self.port)).await.map_err(err),
        }
    }
}

impl std::fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            None => write!(f, ":{}", self.port),
            Some(h) if h.contains(':') => write!(f, "[{h}]:{}", self.port),
            Some(h) => write!(f, "{h}:{}", self.port),
        }
    }
}

/// Errors starting an HTTP server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address string is not `:port` or `host:port`.
    #[error("invalid listen address {value:?}: {reason}")]
    Address {
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// Binding the socket failed (port in use, no such host, …).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address, as given.
        addr: String,
        /// The OS error.
        source: std::io::Error,
    },
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    /// Where it listens (the real port when `:0` was asked for).
    pub local_addr: SocketAddr,
    /// Ends after the shutdown signal, once open connections have finished their responses.
    pub handle: JoinHandle<()>,
}

/// A health check for `/healthz`: `Err(reason)` answers 500 with the reason.
pub type HealthCheck = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

type Handler = Arc<dyn Fn(&Request<Incoming>) -> Response<Full<Bytes>> + Send + Sync>;

fn text(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

/// 404 for other paths, 405 for methods other than GET and HEAD.
fn route(req: &Request<Incoming>, path: &str, ok: impl FnOnce() -> Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    if req.uri().path() != path {
        return text(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "404 page not found\n".into());
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "method not allowed\n".into());
    }
    ok()
}

/// Serves `GET /metrics` with the OpenMetrics text `encode` returns (another registry than the
/// scheduler's, e.g. `basalt controller`'s), as [`serve_metrics`].
///
/// Errors: a bad address or a failed bind.
pub async fn serve_encoded(
    addr: &str,
    encode: Arc<dyn Fn() -> String + Send + Sync>,
    shutdown: watch::Receiver<bool>,
) -> Result<HttpServer, ServeError> {
    let handler: Handler =
        Arc::new(move |req| route(req, "/metrics", || text(StatusCode::OK, OPENMETRICS_CONTENT_TYPE, encode())));
    serve(addr, handler, shutdown).await
}

/// Serves `GET /healthz` on `addr` until `shutdown` turns true (or its sender is dropped):
/// 200 `ok` while `health` passes, else 500 with its reason (as kube's healthz handler).
///
/// Errors: a bad address or a failed bind.
pub async fn serve_healthz(addr: &str, health: HealthCheck, shutdown: watch::Receiver<bool>) -> Result<HttpServer, ServeError> {
    let handler: Handler = Arc::new(move |req| {
        route(req, "/healthz", || match health() {
            Ok(()) => text(StatusCode::OK, "text/plain; charset=utf-8", "ok".into()),
            Err(reason) => text(StatusCode::INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", format!("unhealthy: {reason}\n")),
        })
    });
    serve(addr, handler, shutdown).await
}

/// Resolves once `rx` holds `true` or its sender is gone.
async fn stopped(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}

async fn serve(addr: &str, handler: Handler, shutdown: watch::Receiver<bool>) -> Result<HttpServer, ServeError> {
    let listen = ListenAddress::parse(addr)?;
    let listener = listen.bind().await?;
    let local_addr = listener.local_addr().map_err(|source| ServeError::Bind { addr: addr.to_string(), source })?;
    let handle = tokio::spawn(async move {
        let stop = stopped(shutdown.clone());
        tokio::pin!(stop);
        loop {
            let stream = tokio::select! {
                () = &mut stop => break,
                r = listener.accept() => match r {
                    Ok((s, _)) => s,
                    Err(e) => {
                        // Out of file descriptors and the like: wait instead of spinning.
                        tracing::warn!(%local_addr, error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
            };
            let h = handler.clone();
            let conn_stop = stopped(shutdown.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let resp = h(&req);
                    async move { Ok::<_, Infallible>(resp) }
                });
                let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                tokio::pin!(conn);
                tokio::pin!(conn_stop);
                tokio::select! {
                    _ = conn.as_mut() => {}
                    () = &mut conn_stop => {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                }
            });
        }
    });
    Ok(HttpServer { local_addr, handle })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// `GET path` over a real TCP connection; returns (status code, body).
    pub(crate) async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes()).await.unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).await.unwrap();
        let (head, body) = buf.split_once("\r\n\r\n").unwrap();
        let code = head.split(' ').nth(1).unwrap().parse().unwrap();
        (code, head.to_string(), body.to_string())
    }

    #[test]
    fn listen_addresses_parse_go_style() {
        assert_eq!(ListenAddress::parse(":8080").unwrap(), ListenAddress { host: None, port: 8080 });
        assert_eq!(ListenAddress::parse("127.0.0.1:0").unwrap(), ListenAddress { host: Some("127.0.0.1".into()), port: 0 });
        assert_eq!(ListenAddress::parse("[::1]:11251").unwrap(), ListenAddress { host: Some("::1".into()), port: 11251 });
        assert_eq!(ListenAddress::parse("localhost:80").unwrap().host.as_deref(), Some("localhost"));
        for bad in ["8080", ":http", ":70000", "::1:80", ""] {
            let e = ListenAddress::parse(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
        assert_eq!(ListenAddress::parse("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert_eq!(ListenAddress::parse(":80").unwrap().to_string(), ":80");
    }

    #[tokio::test]
    async fn healthz_answers_ok_and_500_when_unhealthy() {
        let healthy = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let h = healthy.clone();
        let check: HealthCheck =
            Arc::new(
                move || {
                    if h.load(std::sync::atomic::Ordering::SeqCst) {
                        Ok(())
                    } else {
                        Err("lost the leader lease".into())
                    }
                },
            );
        let (stop_tx, stop_rx) = watch::channel(false);
        let srv = serve_healthz("127.0.0.1:0", check, stop_rx).await.unwrap();
        let (code, _, body) = get(srv.local_addr, "/healthz").await;
        assert_eq!((code, body.as_str()), (200, "ok"));
        healthy.store(false, std::sync::atomic::Ordering::SeqCst);
        let (code, _, body) = get(srv.local_addr, "/healthz").await;
        assert_eq!(code, 500);
        assert!(body.contains("lost the leader lease"), "{body}");
        drop(stop_tx);
        srv.handle.await.unwrap();
    }

    #[tokio::test]
    async fn a_taken_port_is_a_bind_error() {
        let (_tx, rx) = watch::channel(false);
        let first = serve_healthz("127.0.0.1:0", Arc::new(|| Ok(())), rx.clone()).await.unwrap();
        let e = serve_healthz(&first.local_addr.to_string(), Arc::new(|| Ok(())), rx).await.unwrap_err();
        assert!(matches!(e, ServeError::Bind { .. }), "{e}");
        assert!(e.to_string().contains(&first.local_addr.to_string()), "{e}");
    }
}
