//! A linear pre-scan that bounds how deeply a YAML document nests before it reaches the YAML
//! parser.
//!
//! The parser's time grows with the square of the nesting depth (10,000 levels of `[` take
//! seconds, 100,000 over a minute, for a 200 KB file), and no Kubernetes object comes close to
//! [`MAX_NESTING_DEPTH`] levels, so deeper documents are refused without being parsed.
//!
//! The scan counts each open indentation level (`key:` followed by deeper lines, and each `- `
//! or `? ` of a compact chain such as `- - - x`) and each open flow collection (`[`, `{`) outside
//! quoted scalars, comments and block scalars (`|`, `>`). A flow indicator inside a block-context
//! plain scalar (`image: a[1]`) is not a collection and is not counted. A block sequence written
//! at its parent key's indentation shares that level's count, so the real depth is at most twice
//! the count: the bound, not an exact depth, is what keeps the parser fast.

/// The deepest nesting of collections (mappings and sequences, block or flow) a document may
/// have. Kubernetes objects, `kubectl get -o yaml` output included (`managedFields`), stay under
/// about 20; CRD schemas under about 40.
pub const MAX_NESTING_DEPTH: usize = 64;

/// Where a document first nests deeper than the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// 1-based line in the scanned text.
    pub line: usize,
}

/// Checks that `text` (one YAML document, or JSON) nests at most `limit` collections deep.
///
/// Errors: [`TooDeep`] with the first line where the count passes `limit`. Runs in one pass,
/// time linear in `text`.
pub fn check_depth(text: &str, limit: usize) -> Result<(), TooDeep> {
    let mut s = Scan::default();
    for (i, line) in text.lines().enumerate() {
        if s.line(line) > limit {
            return Err(TooDeep { line: i + 1 });
        }
    }
    Ok(())
}

/// Scanner state carried from line to line.
#[derive(Default)]
struct Scan {
    /// Columns of the open block collections, increasing.
    indents: Vec<usize>,
    /// Open `[` / `{`.
    flow: usize,
    /// Inside a quoted scalar that continues on the next line: its quote character.
    quote: Option<char>,
    /// Inside a block scalar: lines indented deeper than this column belong to it.
    block_scalar: Option<usize>,
}

impl Scan {
    /// Scans one line; returns the deepest nesting seen on it.
    fn line(&mut self, line: &str) -> usize {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = &line[indent..];
        if let Some(parent) = self.block_scalar {
            if content.trim().is_empty() || indent > parent {
                return self.depth();
            }
            self.block_scalar = None;
        }
        let mut deepest = self.depth();
        let mut chars = content.char_indices().peekable();
        // Block structure, only at the start of a line outside flow collections and quotes.
        if self.flow == 0 && self.quote.is_none() {
            if content.is_empty() || content.starts_with('#') {
                return deepest;
            }
            while self.indents.last().is_some_and(|&c| c > indent) {
                self.indents.pop();
            }
            if self.indents.last() != Some(&indent) {
                self.indents.push(indent);
            }
            // `- - x` and `? ? x`: the first indicator's collection sits at the line's
            // indentation (counted above); each further one opens another at its column.
            while let Some(&(at, c)) = chars.peek() {
                // `c` is ASCII before `at + 1` is taken as a boundary.
                if matches!(c, '-' | '?') && content[at + 1..].chars().next().is_none_or(|n| n == ' ') {
                    chars.next();
                    if at > 0 {
                        self.indents.push(indent + at);
                    }
                    while chars.peek().is_some_and(|&(_, c)| c == ' ') {
                        chars.next();
                    }
                } else {
                    break;
                }
            }
            deepest = deepest.max(self.depth());
        }
        let mut prev = ' ';
        // In block context a flow collection or a quoted scalar can only begin where a value
        // begins: the line start (after any `- `) or after `: `. Elsewhere on the line the
        // characters belong to a plain scalar (`a: it's [x]`).
        let mut value_start = true;
        while let Some((at, c)) = chars.next() {
            if let Some(q) = self.quote {
                match c {
                    '\\' if q == '"' => {
                        chars.next();
                    }
                    '\'' if q == '\'' && chars.peek().is_some_and(|&(_, n)| n == '\'') => {
                        chars.next();
                    }
                    _ if c == q => self.quote = None,
                    _ => {}
                }
                prev = c;
                continue;
            }
            // A node may start here (after a space, an indicator or the line start).
            let node_start =
                if self.flow > 0 { prev == ' ' || prev == '\t' || matches!(prev, '[' | '{' | ',' | ':') } else { value_start };
            if self.flow == 0 && !matches!(c, ' ' | '\t') {
                let key_end = c == ':' && content[at + 1..].chars().next().is_none_or(|n| n == ' ' || n == '\t');
                value_start = key_end;
            }
            match c {
                '#' if prev == ' ' || prev == '\t' => break,
                '"' | '\'' if node_start => self.quote = Some(c),
                '[' | '{' if self.flow > 0 || node_start => {
                    self.flow += 1;
                    deepest = deepest.max(self.depth());
                }
                ']' | '}' if self.flow > 0 => self.flow -= 1,
                '|' | '>' if self.flow == 0 && node_start && is_block_scalar_header(&content[at + 1..]) => {
                    self.block_scalar = Some(indent);
                    break;
                }
                _ => {}
            }
            prev = c;
        }
        deepest
    }

    fn depth(&self) -> usize {
        self.indents.len() + self.flow
    }
}

/// True when what follows a `|` or `>` makes it a block scalar header: chomping and indentation
/// indicators, then nothing or a comment.
fn is_block_scalar_header(rest: &str) -> bool {
    let rest = rest.trim_start_matches(['+', '-', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    let rest = rest.trim_start();
    rest.is_empty() || rest.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        (0..200).find(|&limit| check_depth(text, limit).is_ok()).unwrap_or(usize::MAX)
    }

    #[test]
    fn counts_block_and_flow_collections() {
        assert_eq!(depth(""), 0);
        assert_eq!(depth("a: 1\n"), 1);
        assert_eq!(depth("a:\n  b:\n    c: 1\n"), 3);
        assert_eq!(depth("a: [1, [2, {b: 3}]]\n"), 4);
        assert_eq!(depth("- - - x\n"), 3);
        assert_eq!(depth("a:\n- b: 1\n  c: [x]\n"), 3);
        assert_eq!(depth("a: {\n  b: [\n    1\n  ]\n}\nc: 2\n"), 3);
        // The line's indentation counts as a level too (a bound, not an exact depth).
        assert_eq!(depth("{\"a\": [[1], {\"b\": []}]}"), 5, "JSON too");
    }

    #[test]
    fn scalars_comments_and_block_scalars_are_not_collections() {
        assert_eq!(depth("image: registry/a[1]{2}\n"), 1, "flow indicators inside a plain scalar");
        assert_eq!(depth("a: '[[[['\nb: \"{{{{\\\"\"\n"), 1, "quoted");
        assert_eq!(depth("a: it's [x]\n"), 1, "an apostrophe inside a plain scalar opens no quote");
        assert_eq!(depth("a: 1 # [[[[\n"), 1, "comment");
        assert_eq!(depth("a: |\n  [[[[\n  {{{{\nb: [1]\n"), 2, "block scalar, then a flow sequence");
        assert_eq!(depth("a: >-\n    - - - -\n\n    x\nb: 1\n"), 1);
        assert_eq!(depth("a: 'multi\n  [[[[ line'\nb: 1\n"), 1, "a quoted scalar over two lines");
        assert_eq!(depth("é: ü\n- ñ: [ö]\n  ?ä\n→ - x\n"), 2, "multi-byte characters anywhere");
    }

    #[test]
    fn never_panics_on_any_short_text() {
        // Every string of up to 5 characters over the scanner's special characters, a
        // multi-byte letter and a newline.
        let alphabet = ['-', '?', ' ', ':', '[', ']', '{', '"', '\'', '#', '|', '\n', 'é', '\\'];
        let mut text = String::new();
        fn all(text: &mut String, alphabet: &[char], left: usize) {
            let _ = check_depth(text, 2);
            if left == 0 {
                return;
            }
            for &c in alphabet {
                text.push(c);
                all(text, alphabet, left - 1);
                text.pop();
            }
        }
        all(&mut text, &alphabet, 5);
    }

    #[test]
    fn reports_the_first_line_past_the_limit() {
        let text = "a:\n  b:\n    c:\n      d: 1\n";
        assert_eq!(check_depth(text, 4), Ok(()));
        assert_eq!(check_depth(text, 2), Err(TooDeep { line: 3 }));
        let deep = format!("x: 1\ny: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(check_depth(&deep, MAX_NESTING_DEPTH), Err(TooDeep { line: 2 }));
        let dashes = format!("{}x\n", "- ".repeat(100_000));
        assert_eq!(check_depth(&dashes, MAX_NESTING_DEPTH), Err(TooDeep { line: 1 }));
    }
}
