//! The Kubernetes plumbing that the long-running commands share (`basalt scheduler` in
//! [`crate::live`], `basalt controller` in [`crate::controller`], and the coming webhook
//! manager): how a failed API call is read ([`api_errors`]), the API client and kubeconfig ([`client`]), leader election on a Lease
//! ([`leader`]), the client-side rate limiter ([`limiter`]), the `/metrics` and `/healthz`
//! servers ([`http`]), the generic watch loop ([`watch`]), the one retry policy of the write loops ([`retry`]), the `v1` Event recorder ([`events`]),
//! the process runner from start to signal ([`process`]). It names no scheduler, controller or
//! simulator type: everything here is the same for every process that talks to the API server.

pub mod api_errors;
pub mod client;
pub mod events;
pub mod http;
pub mod leader;
pub mod limiter;
pub mod process;
pub mod retry;
pub mod watch;
