//! `vcctl version`: the lines Volcano's `version.PrintVersionAndExit` prints, with Basalt's
//! version; the Go toolchain lines become the target's OS and architecture.

/// The text of `vcctl version`: `API Version: v1alpha1`, `Version: <basalt version>`,
/// `Git SHA:` and `Built At:` (from `BASALT_GIT_SHA` / `BASALT_BUILT_AT` at build time, else
/// `Not provided.` as Volcano's), `OS/Arch: <os>/<arch>` in Go's names (`linux/amd64`).
pub fn text() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!(
        "API Version: v1alpha1\nVersion: {}\nGit SHA: {}\nBuilt At: {}\nOS/Arch: {}/{arch}\n",
        env!("CARGO_PKG_VERSION"),
        option_env!("BASALT_GIT_SHA").unwrap_or("Not provided."),
        option_env!("BASALT_BUILT_AT").unwrap_or("Not provided."),
        std::env::consts::OS,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_lines_are_volcanos() {
        let t = super::text();
        let keys: Vec<&str> = t.lines().map(|l| l.split(':').next().unwrap()).collect();
        assert_eq!(keys, ["API Version", "Version", "Git SHA", "Built At", "OS/Arch"]);
        assert!(t.starts_with("API Version: v1alpha1\nVersion: "));
        assert!(t.contains(env!("CARGO_PKG_VERSION")));
    }
}
