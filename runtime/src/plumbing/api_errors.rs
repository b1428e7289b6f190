//! How the processes' retry loops read a failed API call, one definition for all of them (the
//! status writer, the Event recorder, the controllers): retried when transient (client-go's
//! rule: the server asked to slow down, 429, or failed, 5xx, or the call never got an answer),
//! given up on a conflict or a missing object as each loop decides.

/// The HTTP status of an API error, if the server answered.
pub fn api_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// Whether a retry may succeed: 429 (too many requests), a 5xx, or no answer at all
/// (a transport error or a timeout).
pub fn transient(e: &kube::Error) -> bool {
    api_code(e).is_none_or(|c| c == 429 || c >= 500)
}

/// Whether the request never reached a server: a transport error other than a timeout (an API
/// status, 429 or 5xx included, means the server answered).
pub fn unreachable(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(_) => false,
        other => !other.to_string().contains("timed out"),
    }
}

/// 409 Conflict: the object changed since it was read (or already exists, for a create).
pub fn conflict(e: &kube::Error) -> bool {
    api_code(e) == Some(409)
}

/// 404 Not Found: the object (or its namespace) is gone.
pub fn not_found(e: &kube::Error) -> bool {
    api_code(e) == Some(404)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api(code: u16) -> kube::Error {
        let mut s = Status::failure("x", "");
        s.code = code;
        kube::Error::Api(Box::new(s))
    }

    #[test]
    fn codes_are_read_as_the_loops_need() {
        for c in [429, 500, 503, 504] {
            assert!(transient(&api(c)), "{c} is retried");
        }
        for c in [400, 403, 404, 409, 422] {
            assert!(!transient(&api(c)), "{c} is not retried");
        }
        assert!(conflict(&api(409)) && !conflict(&api(404)));
        assert!(not_found(&api(404)) && !not_found(&api(409)));
        assert_eq!(api_code(&api(422)), Some(422));
        assert!(!unreachable(&api(503)), "a server that answers is reachable");
        let io = kube::Error::Service(Box::new(std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused")));
        assert!(transient(&io) && unreachable(&io) && api_code(&io).is_none());
        let timeout = kube::Error::Service(Box::new(std::io::Error::new(std::io::ErrorKind::TimedOut, "operation timed out")));
        assert!(transient(&timeout) && !unreachable(&timeout), "a timeout may have reached the server");
    }
}
