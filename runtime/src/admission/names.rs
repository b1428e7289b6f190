//! apimachinery's name checks (`k8s.io/apimachinery/pkg/util/validation`) with their messages,
//! as Volcano's job rules print them: `IsQualifiedName` (job and pod names) and
//! `IsDNS1123Subdomain` (a pod template's name).

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// apimachinery's `RegexError`: `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let first = s.chars().next();
    let last = s.chars().last();
    first.is_some_and(alnum) && last.is_some_and(alnum) && s.chars().all(|c| alnum(c) || c == '-' || c == '_' || c == '.')
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns1123_label_part(s: &str) -> bool {
    let lower_alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.chars().next().is_some_and(lower_alnum)
        && s.chars().last().is_some_and(lower_alnum)
        && s.chars().all(|c| lower_alnum(c) || c == '-')
}

/// apimachinery's `IsDNS1123Subdomain`: the problems of `value` (empty when valid).
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !value.split('.').all(is_dns1123_label_part) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// apimachinery's `IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`, then a name
/// part of at most 63 characters. The problems of `value` (empty when valid).
pub fn qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            errs.push(regex_error(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"],
            ) + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(regex_error(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            QUALIFIED_NAME_FMT,
            &["MyName", "my.name", "123-abc"],
        ));
    }
    errs
}

/// Go's `%v` of a `[]string`: `[a b]`.
pub fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_follow_apimachinery() {
        for ok in ["job", "Job_1", "a.b-c", "x", "example.com/My.Name"] {
            assert!(qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(qualified_name("-job").len(), 1);
        assert!(qualified_name("-job")[0].starts_with("name part must consist of alphanumeric characters"));
        assert!(qualified_name(&"a".repeat(64))[0].contains("no more than 63 characters"));
        assert_eq!(qualified_name(""), vec!["name part must be non-empty".to_string(), qualified_name("-")[0].clone()]);
        assert!(qualified_name("a/b/c")[0].starts_with("a qualified name must consist"));
        assert!(qualified_name("Bad_Prefix/x")[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
    }

    #[test]
    fn subdomains_are_lowercase_labels() {
        assert!(dns1123_subdomain("worker-1.ps").is_empty());
        let e = dns1123_subdomain("Worker_1");
        assert_eq!(e.len(), 1);
        assert!(e[0].ends_with("(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"), "{}", e[0]);
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert_eq!(dns1123_subdomain(&"a".repeat(254))[0], "must be no more than 253 characters");
    }
}
