//! `vsub --command`: one string split into a container's `command` as a POSIX shell splits
//! words (Volcano uses `github.com/google/shlex`): blanks separate words, single quotes keep
//! everything literal, double quotes keep all but `\"` and `\\`, a backslash outside quotes
//! escapes the next character.

/// The words of `s`.
///
/// Errors: an unterminated quote or a trailing backslash, naming the string.
pub fn split(s: &str) -> Result<Vec<String>, String> {
    shlex::split(s).ok_or_else(|| format!("--command {s:?}: unterminated quote or trailing backslash"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_does() {
        assert_eq!(split("sh -c 'sleep 10; echo \"done\"'").unwrap(), ["sh", "-c", "sleep 10; echo \"done\""]);
        assert_eq!(split("  a\\ b \"c d\"  ").unwrap(), ["a b", "c d"]);
        assert!(split("echo 'oops").unwrap_err().contains("unterminated"));
    }
}
